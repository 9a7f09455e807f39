// Package attention is the measure of attention diagnostics: what each head's attention looks
// like, by query position, at every evaluation length, taken from the protocol's shared pass
// for the runs whose eval.measures name it. It is written against the public measure API, as
// image/png is for image, and registered by package builtin. Across a comparison it reports each
// label's attention over seeds, two figures, tables of the window's last octave of queries and
// a sentence on what they show.
package attention

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"path/filepath"
	"strconv"

	"extrapolate/data"
	"extrapolate/experiments/measure"
	"extrapolate/model"
	"extrapolate/model/nn"
)

// Files of attention diagnostics, in a run folder and in a comparison folder.
const (
	RunCSV         = "attention.csv"
	RunJSON        = "attention.json"
	ComparisonCSV  = "attention_by_run.csv"
	ComparisonJSON = "attention_by_run.json"
	EntropyPNG     = "attention_entropy_by_run.png"
	EntropySVG     = "attention_entropy_by_run.svg"
	FarPNG         = "attention_far_by_run.png"
	FarSVG         = "attention_far_by_run.svg"
)

// Measure is what each head's attention looks like, by query position, at every
// evaluation length: the entropy of its distribution over the keys, and its share on keys
// farther back than training ever showed. These are the quantities the log-n and
// Scalable-Softmax papers argue from: attention that fades over more keys than training showed.
// Its numbers come from the probabilities the attention op computes in the protocol's pass
// (model.Options.AttentionStats), which it does not change. A run takes it when eval.measures
// names it.
type Measure struct{}

func (Measure) Name() string    { return "attention" }
func (Measure) Files() []string { return []string{RunCSV, RunJSON} }

func (Measure) Start(*measure.Evaluation) (measure.Recorder, error) { return &run{}, nil }

// Bin is one head's attention at the queries From to To of the window, an octave of
// positions, mean over those queries and over the windows.
type Bin struct {
	From int `json:"from"`
	To   int `json:"to"`
	// Entropy is the entropy of the attention over the keys up to the query, in nats; Uniform
	// is that of uniform attention there, the mean of log(i+1) over the bin's queries i.
	Entropy float64 `json:"entropy"`
	Uniform float64 `json:"uniform_entropy"`
	// Far is the share of the attention on keys at least the training length back.
	Far float64 `json:"far_mass"`
}

// Head is one head's attention by octave of query positions.
type Head struct {
	Layer int   `json:"layer"`
	Head  int   `json:"head"`
	Bins  []Bin `json:"bins"`
}

// Length is a run's attention at one evaluation length.
type Length struct {
	Length     int    `json:"length"`
	Applicable bool   `json:"applicable"`
	Reason     string `json:"reason,omitempty"`
	// Windows is how many windows the means are over; with sliding windows (eval.stride) the
	// copies of the last window that fill the last batch count too.
	Windows int    `json:"windows"`
	Heads   []Head `json:"heads"`
}

// file is a run's attention.json.
type file struct {
	Name     string   `json:"name"`
	Scheme   string   `json:"scheme"`
	Scaling  string   `json:"scaling,omitempty"`
	Seed     uint64   `json:"seed"`
	TrainLen int      `json:"train_len"`
	Protocol string   `json:"protocol"`
	Lengths  []Length `json:"lengths"`
}

// run measures one run.
type run struct {
	lengths []Length
	stats   []*nn.AttentionStats // the length under way's, summed over its batches so far
}

func (r *run) GraphOptions(o *model.Options) { o.AttentionStats = true }

func (r *run) Length(int) measure.LengthObserver { r.stats = nil; return r }

func (r *run) Batch(g *model.Graph, _ []data.Window, _ []float64) { r.stats = g.Stats }

// End bins the length's statistics; a length not scored, or not finite, has none.
func (r *run) End(l measure.PassLength) {
	al := Length{Length: l.Length, Reason: l.Reason}
	if l.Sum != nil && r.stats != nil {
		al.Applicable = true
		al.Windows, al.Heads = binHeads(r.stats, l.Length)
		if reason := nonFinite(al.Heads); reason != "" {
			al.Applicable, al.Reason, al.Heads = false, reason, nil
		}
	}
	r.lengths = append(r.lengths, al)
}

// binHeads bins every layer's statistics, head by head, for windows of n tokens.
func binHeads(stats []*nn.AttentionStats, n int) (windows int, heads []Head) {
	for l, st := range stats {
		windows = st.Sequences
		for h := range len(st.Entropy) / n {
			heads = append(heads, Head{Layer: l, Head: h, Bins: octaveBins(st, h, n)})
		}
	}
	return windows, heads
}

// octaveBins averages head h's statistics over the windows, then over the queries of each
// octave of positions, {0}, {1}, {2, 3}, {4, ..., 7}, ...: the bins of loss by position's
// figure, each as wide on a log axis.
func octaveBins(st *nn.AttentionStats, h, n int) []Bin {
	var out []Bin
	w := float64(st.Sequences)
	for from := 0; from < n; {
		to := min(max(from, 2*from-1), n-1)
		b := Bin{From: from, To: to}
		for i := from; i <= to; i++ {
			b.Entropy += st.Entropy[h*n+i] / w
			b.Far += st.FarMass[h*n+i] / w
			b.Uniform += math.Log(float64(i + 1))
		}
		k := float64(to - from + 1)
		b.Entropy, b.Far, b.Uniform = b.Entropy/k, b.Far/k, b.Uniform/k
		out = append(out, b)
		from = to + 1
	}
	return out
}

// nonFinite says which statistic is not a finite number, or "" when all are.
func nonFinite(heads []Head) string {
	for _, hd := range heads {
		for _, b := range hd.Bins {
			if math.IsNaN(b.Entropy+b.Far) || math.IsInf(b.Entropy+b.Far, 0) {
				return fmt.Sprintf("non-finite attention statistics in layer %d, head %d, queries %d to %d", hd.Layer, hd.Head, b.From, b.To)
			}
		}
	}
	return ""
}

// Record writes the run's attention as CSV and JSON.
func (r *run) Record(dir string, res *measure.Result) error {
	if len(r.lengths) == 0 {
		return nil
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"length", "ratio", "layer", "head", "from", "to", "windows", "entropy", "uniform_entropy", "far_mass", "protocol"})
	for _, al := range r.lengths {
		for _, hd := range al.Heads {
			for _, bin := range hd.Bins {
				w.Write([]string{strconv.Itoa(al.Length), measure.CSVFloat(float64(al.Length) / float64(res.TrainLen)), strconv.Itoa(hd.Layer), strconv.Itoa(hd.Head),
					strconv.Itoa(bin.From), strconv.Itoa(bin.To), strconv.Itoa(al.Windows), measure.CSVFloat(bin.Entropy), measure.CSVFloat(bin.Uniform), measure.CSVFloat(bin.Far), res.Protocol})
			}
		}
	}
	w.Flush()
	if err := measure.WriteFile(filepath.Join(dir, RunCSV), b.Bytes()); err != nil {
		return err
	}
	return measure.WriteJSON(filepath.Join(dir, RunJSON), file{Name: res.Name, Scheme: res.Scheme, Scaling: res.Scaling, Seed: res.Seed,
		TrainLen: res.TrainLen, Protocol: res.Protocol, Lengths: r.lengths})
}
