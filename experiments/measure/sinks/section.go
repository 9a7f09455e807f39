package sinks

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"

	"extrapolate/experiments/measure"
	"extrapolate/model/nn"
)

// ComparisonCSV is a comparison's sinks, a row per label, length and layer (layer "all" for the
// whole model).
const ComparisonCSV = "sinks_by_run.csv"

// Stat is one label's sinks at one length, or in one layer there, over its seeds: the mean and
// standard deviation of each seed's sink rate and first-token weight.
type Stat struct {
	Length    int     `json:"length"`
	Layer     int     `json:"layer"` // -1 for the whole model
	Seeds     int     `json:"seeds"`
	RateMean  float64 `json:"rate_mean"`
	RateStd   float64 `json:"rate_std"`
	FirstMean float64 `json:"first_mean"`
	FirstStd  float64 `json:"first_std"`
}

// Series is one label's sinks by length over its seeds: At holds the whole model's, Layers
// each layer's, length by length.
type Series struct {
	Label    string `json:"label"`
	Position string `json:"position"`
	At       []Stat `json:"at"`
	Layers   []Stat `json:"layers"`
}

// Get is the label's whole-model sinks at length n, and whether some seed has them there.
func (s Series) Get(n int) (Stat, bool) {
	for _, st := range s.At {
		if st.Length == n {
			return st, st.Seeds > 0
		}
	}
	return Stat{}, false
}

// SeriesOf is every label's sinks over its ok runs that took them, checked (check); labels
// without any are left out.
func SeriesOf(rep *measure.Report) ([]Series, error) {
	var out []Series
	for _, s := range rep.Series {
		byLen := map[int][]Length{}
		for _, r := range rep.Runs {
			if r.Label != s.Label || !r.Result.OK() || !slices.Contains(r.Config().Eval.Measures, Measure{}.Name()) {
				continue
			}
			ls := Of(r.Result)
			if err := check(ls, r); err != nil {
				return nil, fmt.Errorf("%s: sinks: %w", filepath.Join(r.Dir, measure.ResultsJSON), err)
			}
			for _, sl := range ls {
				if sl.Applicable {
					byLen[sl.Length] = append(byLen[sl.Length], sl)
				}
			}
		}
		if len(byLen) == 0 {
			continue
		}
		ss := Series{Label: s.Label, Position: s.Position}
		for _, n := range rep.Lengths {
			seeds := byLen[n]
			if len(seeds) == 0 {
				continue
			}
			ss.At = append(ss.At, statOf(n, -1, seeds, func(sl Length) (float64, float64) { return sl.Rate, sl.First }))
			for l := range seeds[0].Layers {
				ss.Layers = append(ss.Layers, statOf(n, l, seeds, func(sl Length) (float64, float64) {
					return sl.Layers[l].Rate, sl.Layers[l].First
				}))
			}
		}
		out = append(out, ss)
	}
	return out, nil
}

// statOf is the mean and deviation over the seeds of what get takes from each.
func statOf(n, layer int, seeds []Length, get func(Length) (rate, first float64)) Stat {
	rates, firsts := make([]float64, len(seeds)), make([]float64, len(seeds))
	for i, sl := range seeds {
		rates[i], firsts[i] = get(sl)
	}
	st := Stat{Length: n, Layer: layer, Seeds: len(seeds)}
	st.RateMean, st.RateStd = measure.MeanStd(rates)
	st.FirstMean, st.FirstStd = measure.MeanStd(firsts)
	return st
}

// check checks a run's sinks against its config: one entry an evaluation length, in order,
// those taken with a layer each of the model's and rates and weights between 0 and 1.
func check(ls []Length, r measure.RunResult) error {
	if ls == nil {
		return errors.New("missing or not readable, though the run's eval.measures names sinks")
	}
	got := make([]int, len(ls))
	for i, sl := range ls {
		got[i] = sl.Length
	}
	if err := measure.SameLengths("lengths", got, r.Config().Eval.Lengths); err != nil {
		return err
	}
	unit := func(x float64) bool { return x >= 0 && x <= 1 }
	for _, sl := range ls {
		switch {
		case !sl.Applicable && sl.Reason == "":
			return fmt.Errorf("length %d: not taken, without the reason", sl.Length)
		case !sl.Applicable:
			continue
		case len(sl.Layers) != r.Config().Model.Layers:
			return fmt.Errorf("length %d: %d layers, want %d", sl.Length, len(sl.Layers), r.Config().Model.Layers)
		case !unit(sl.Rate) || !unit(sl.First):
			return fmt.Errorf("length %d: sink rate %v, first-token weight %v, want shares between 0 and 1", sl.Length, sl.Rate, sl.First)
		}
		for _, ly := range sl.Layers {
			if !unit(ly.Rate) || !unit(ly.First) {
				return fmt.Errorf("length %d layer %d: sink rate %v, first-token weight %v, want shares between 0 and 1", sl.Length, ly.Layer, ly.Rate, ly.First)
			}
		}
	}
	return nil
}

// Section is the comparison's sinks by label and length; nil when no run took them.
func (Measure) Section(rep *measure.Report) (measure.Section, error) {
	ss, err := SeriesOf(rep)
	if err != nil || len(ss) == 0 {
		return nil, err
	}
	return section{rep, ss}, nil
}

type section struct {
	rep    *measure.Report
	series []Series
}

// Write writes the series as CSV, the whole model's rows first for each label.
func (s section) Write(dir string) error {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"label", "position", "length", "ratio", "layer", "seeds", "sink_rate_mean", "sink_rate_std", "first_token_weight_mean", "first_token_weight_std"})
	for _, ss := range s.series {
		for _, st := range append(slices.Clone(ss.At), ss.Layers...) {
			layer := "all"
			if st.Layer >= 0 {
				layer = strconv.Itoa(st.Layer)
			}
			w.Write([]string{ss.Label, ss.Position, strconv.Itoa(st.Length), measure.CSVFloat(float64(st.Length) / float64(s.rep.TrainLen)), layer,
				strconv.Itoa(st.Seeds), measure.CSVFloat(st.RateMean), measure.CSVFloat(st.RateStd), measure.CSVFloat(st.FirstMean), measure.CSVFloat(st.FirstStd)})
		}
	}
	w.Flush()
	return measure.WriteFile(filepath.Join(dir, ComparisonCSV), b.Bytes())
}

// Markdown is a table of the sink rate and the first-token weight by label and length.
func (s section) Markdown(w io.Writer) {
	fmt.Fprintf(w, "\n## Attention sinks\n\n")
	fmt.Fprintf(w, "The sink rate is the share of heads, over every layer and window, whose weight on the window's first token, "+
		"averaged over the window's queries, is above ε = %g (Gu et al. 2025, as softpick's paper computes it); the weight "+
		"on the first token is that average itself, over heads, layers and windows. Mean ± standard deviation over seeds; "+
		"per layer in `%s`, per head in each run's `%s`.\n\n", nn.SinkThreshold, ComparisonCSV, RunCSV)
	fmt.Fprintf(w, "| label |")
	for _, n := range s.rep.Lengths {
		fmt.Fprintf(w, " %s |", measure.Ratio(n, s.rep.TrainLen))
	}
	fmt.Fprintf(w, "\n|---|")
	for range s.rep.Lengths {
		fmt.Fprintf(w, "---|")
	}
	fmt.Fprintln(w)
	for _, ss := range s.series {
		fmt.Fprintf(w, "| %s |", ss.Label)
		for _, n := range s.rep.Lengths {
			if st, ok := ss.Get(n); ok {
				fmt.Fprintf(w, " %s ± %s (%.2f) |", measure.Percent(st.RateMean), measure.Percent(st.RateStd), st.FirstMean)
			} else {
				fmt.Fprintf(w, " – |")
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\nEach cell: sink rate (first-token weight).\n")
}
