// Package sinks is the measure of attention sinks: how much of each head's attention goes to
// the window's first token, by layer and evaluation length, and the sink rate Gu et al. define
// ("When Attention Sink Emerges in Language Models: An Empirical View", ICLR 2025, arXiv
// 2410.10781, §3.1): the share of heads whose weight on the first token, averaged over a
// sequence's queries, exceeds ε = 0.3 (nn.SinkThreshold), here over every layer, head and
// window. Softpick (arXiv 2504.20966) reports the same rate with the same ε
// (zaydzuhri/softpick-attention, calculate_sink_rate), and gated attention (arXiv 2505.06708)
// the first token's share. Its numbers come from the protocol's shared pass
// (model.Options.AttentionStats), which they do not change. A run takes it when eval.measures
// names it; it is registered by package builtin.
package sinks

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"extrapolate/data"
	"extrapolate/experiments/measure"
	"extrapolate/model"
	"extrapolate/model/nn"
)

// RunCSV is a run's sinks head by head; the run's results file keeps the rates by layer.
const RunCSV = "sinks.csv"

// Measure is attention sinks by layer and length.
type Measure struct{}

func (Measure) Name() string    { return "sinks" }
func (Measure) Files() []string { return []string{RunCSV} }

func (Measure) Start(*measure.Evaluation) (measure.Recorder, error) { return &run{}, nil }

// Head is one head's sink at one length.
type Head struct {
	Layer int `json:"layer"`
	Head  int `json:"head"`
	// First is the head's weight on the window's first token, mean over the queries and the
	// windows; Rate the share of windows in which that mean, over the window's queries, is
	// above nn.SinkThreshold.
	First float64 `json:"first"`
	Rate  float64 `json:"rate"`
}

// Layer is a layer's sinks at one length: its heads' rates and first-token weights, averaged.
type Layer struct {
	Layer int     `json:"layer"`
	Rate  float64 `json:"rate"`
	First float64 `json:"first"`
}

// Length is a run's sinks at one evaluation length: the sink rate over every layer, head and
// window, and the mean weight on the first token, then layer by layer.
type Length struct {
	Length     int     `json:"length"`
	Applicable bool    `json:"applicable"`
	Reason     string  `json:"reason,omitempty"`
	Windows    int     `json:"windows,omitempty"`
	Rate       float64 `json:"rate"`
	First      float64 `json:"first"`
	Layers     []Layer `json:"layers,omitempty"`
	heads      []Head
}

// run measures one run.
type run struct {
	lengths []Length
	stats   []*nn.AttentionStats
}

func (r *run) GraphOptions(o *model.Options) { o.AttentionStats = true }

func (r *run) Length(int) measure.LengthObserver { r.stats = nil; return r }

func (r *run) Batch(g *model.Graph, _ []data.Window, _ []float64) { r.stats = g.Stats }

// End takes the length's sinks; a length not scored, or not finite, has none.
func (r *run) End(l measure.PassLength) {
	sl := Length{Length: l.Length, Reason: l.Reason}
	if l.Sum != nil && r.stats != nil {
		sl = of(r.stats, l.Length)
		if math.IsNaN(sl.First) || math.IsInf(sl.First, 0) {
			sl = Length{Length: l.Length, Reason: "non-finite attention weights on the first token"}
		}
	}
	r.lengths = append(r.lengths, sl)
}

// of is the sinks of every layer's statistics for windows of n tokens.
func of(stats []*nn.AttentionStats, n int) Length {
	sl := Length{Length: n, Applicable: true}
	for l, st := range stats {
		w := float64(st.Sequences)
		sl.Windows = st.Sequences
		ly := Layer{Layer: l}
		heads := len(st.First) / n
		for h := range heads {
			hd := Head{Layer: l, Head: h, Rate: float64(st.Sinks[h]) / w}
			for _, x := range st.First[h*n : (h+1)*n] {
				hd.First += x
			}
			hd.First /= w * float64(n)
			ly.Rate += hd.Rate / float64(heads)
			ly.First += hd.First / float64(heads)
			sl.heads = append(sl.heads, hd)
		}
		sl.Rate += ly.Rate / float64(len(stats))
		sl.First += ly.First / float64(len(stats))
		sl.Layers = append(sl.Layers, ly)
	}
	return sl
}

// Record writes the run's heads as CSV and keeps the rates by layer in its results file.
func (r *run) Record(dir string, res *measure.Result) error {
	if len(r.lengths) == 0 {
		return nil
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"length", "ratio", "layer", "head", "windows", "first_token_weight", "sink_rate"})
	for _, sl := range r.lengths {
		for _, hd := range sl.heads {
			w.Write([]string{strconv.Itoa(sl.Length), measure.CSVFloat(float64(sl.Length) / float64(res.TrainLen)),
				strconv.Itoa(hd.Layer), strconv.Itoa(hd.Head), strconv.Itoa(sl.Windows), measure.CSVFloat(hd.First), measure.CSVFloat(hd.Rate)})
		}
	}
	w.Flush()
	if err := measure.WriteFile(filepath.Join(dir, RunCSV), b.Bytes()); err != nil {
		return err
	}
	return res.SetMeasurement(Measure{}.Name(), r.lengths)
}

// Of is a run's sinks by length, as its results file keeps them; none when it has none or
// they do not read (which the report's section says).
func Of(res *measure.Result) []Length {
	var ls []Length
	if _, err := res.Measurement(Measure{}.Name(), &ls); err != nil {
		return nil
	}
	return ls
}

// Summary is the run's sink rate and first-token weight by length.
func (Measure) Summary(res *measure.Result) string {
	ls := Of(res)
	if len(ls) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "attention sinks (share of heads whose mean weight on the first token is above %g; that weight):\n", nn.SinkThreshold)
	for _, sl := range ls {
		if !sl.Applicable {
			fmt.Fprintf(&b, "  %6d  not taken: %s\n", sl.Length, sl.Reason)
			continue
		}
		fmt.Fprintf(&b, "  %6d  sink rate %s  first-token weight %.3f\n", sl.Length, measure.Percent(sl.Rate), sl.First)
	}
	return b.String()
}
