// Package evaluate scores one trained checkpoint under several RoPE scalings and distance maps
// (Variants), so that their effects are seen on the same weights, apart from training noise: at
// every evaluation length, by perplexity, or, for a checkpoint trained on tasks, on its tasks'
// held-out examples at every test size. It writes what cmd/eval reports (Report).
//
// It sits above package training, whose checkpoints it loads, and below the commands; nothing
// of the run or the comparison imports it.
package evaluate

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"extrapolate/data"
	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/measure/perplexity"
	"extrapolate/experiments/measure/tasks"
	"extrapolate/experiments/plot"
	"extrapolate/experiments/training"
	"extrapolate/internal/inputerr"
	"extrapolate/position"
)

// Files of a checkpoint's evaluation on the corpus: the report (also a task checkpoint's), its
// table and its figure.
const (
	ScalingsCSV  = "ppl_by_scaling.csv"
	ScalingsJSON = "ppl_by_scaling.json"
	ScalingsPNG  = "ppl_by_scaling.png"
	ScalingsSVG  = "ppl_by_scaling.svg"
)

// Result is one checkpoint evaluated under one variant: a RoPE scaling, a distance map, both or
// neither.
type Result struct {
	// Scaling is "none" or the type and factor, e.g. "yarn(factor=auto)".
	Scaling string                 `json:"scaling"`
	Lengths []measure.LengthResult `json:"lengths,omitempty"`
	// Tasks are the exact match by task and size of a checkpoint trained on tasks, which is
	// scored on its tasks instead of perplexity.
	Tasks []tasks.Cell `json:"tasks,omitempty"`
}

// Report is a checkpoint evaluated under several variants.
type Report struct {
	Checkpoint string `json:"checkpoint"`
	Name       string `json:"name"`
	TrainLen   int    `json:"train_len"`
	Tokens     int    `json:"tokens,omitempty"`
	Corpus     string `json:"corpus,omitempty"`
	Protocol   string `json:"protocol,omitempty"`
	// Examples are the held-out examples scored at each size of a task checkpoint's tasks.
	Examples int `json:"examples,omitempty"`
	// BatchTokens bounds the tokens of an evaluation batch: a batch holds at least one window.
	BatchTokens int `json:"batch_tokens"`
	// Partial says how far training went when the checkpoint was saved before it finished.
	Partial string `json:"partial,omitempty"`
	// Request is what cmd/eval was asked, so that it can tell its own results from another
	// evaluation's before replacing them; absent from a report written before it was recorded.
	Request *Request `json:"request,omitempty"`
	Results []Result `json:"results"`
}

// Request is what an evaluation was asked, resolved: cmd/eval's flags with the checkpoint
// config's defaults filled in. Two evaluations of the same request score the same.
type Request struct {
	// Checksum is the checkpoint's (training.Trained.Checksum), the SHA-256 that closes its
	// file, of all before it: a checkpoint retrained at the same path is another one.
	Checksum string `json:"checkpoint_checksum"`
	// Variants are the scalings and maps in order, each with every field, unlike the results'
	// names: "yarn(beta_fast=16, factor=auto) + rerope(window=16)".
	Variants []string `json:"variants"`
	// Lengths and Tokens are the evaluation's on the corpus, Examples a task checkpoint's.
	Lengths  []int `json:"lengths,omitempty"`
	Tokens   int   `json:"tokens,omitempty"`
	Examples int   `json:"examples,omitempty"`
}

// Scalings scores one trained model under each scaling (nil for none), so that the scalings are
// compared on the same weights, apart from training noise: at every evaluation length of its
// config's eval section (training.Trained.WithEval gives another), or, for a model trained on
// tasks, on its tasks' held-out examples at every test size.
func Scalings(ctx context.Context, t *training.Trained, scalings []*position.Scaling, w io.Writer) (*Report, error) {
	vs := make([]Variant, len(scalings))
	for i, sc := range scalings {
		vs[i] = Variant{Scaling: sc}
	}
	return Variants(ctx, t, vs, w)
}

// A Variant is how the scheme of a checkpoint is changed to evaluate it: a RoPE scaling, a
// distance map, both or neither (nil), in place of the config's own. One made by NewVariant
// holds the scheme they make, built once; one written as a literal is built when evaluated.
type Variant struct {
	Scaling *position.Scaling
	Map     *position.DistanceMapConfig
	scheme  position.Scheme
}

// NewVariant builds the evaluation scheme of c with the scaling sc and the map m in place of
// its own, and returns the variant holding it, or the error that says why c's scheme takes
// them not: a command checks its variants with it before evaluating, and evaluation uses the
// scheme it built.
func NewVariant(c config.Config, sc *position.Scaling, m *position.DistanceMapConfig) (Variant, error) {
	v := Variant{Scaling: sc, Map: m}
	s, err := v.build(c)
	if err != nil {
		return Variant{}, err
	}
	v.scheme = s
	return v, nil
}

// build makes the variant's scheme of c's evaluation scheme.
func (v Variant) build(c config.Config) (position.Scheme, error) {
	pc := c.EvalPhase().Position
	pc.Scaling, pc.DistanceMap = v.Scaling, v.Map
	return position.New(c.Spec(pc))
}

// Name is the variant as reports name it: "none", "yarn(factor=auto)", "rerope(window=16)", or
// the scaling and the map: "yarn(factor=auto) + rerope".
func (v Variant) Name() string {
	var parts []string
	if v.Scaling != nil {
		parts = append(parts, measure.ScalingName(position.Config{Scaling: v.Scaling}))
	}
	if v.Map != nil {
		parts = append(parts, v.Map.String())
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " + ")
}

// Variants is Scalings for variants that may apply a distance map too.
func Variants(ctx context.Context, t *training.Trained, variants []Variant, w io.Writer) (*Report, error) {
	c := t.Config()
	if c.Task != nil {
		return tasksUnder(ctx, t, variants, w)
	}
	e := c.Eval
	corpus, err := data.Load(c.Data)
	if err != nil {
		return nil, inputerr.Wrap(err)
	}
	// Too many tokens for the validation text is bad input: say so before evaluating anything.
	if _, err := data.NewEvalSet(corpus.Valid, e.Tokens); err != nil {
		return nil, inputerr.Wrap(err)
	}
	ev := &measure.Evaluation{Resolved: t.Resolved, Model: t.Model, Corpus: corpus, Progress: w}
	rep := &Report{Name: c.Name, TrainLen: c.Train.SeqLen, Tokens: e.Tokens, Corpus: corpus.Source, Protocol: e.Protocol(), BatchTokens: e.BatchTokens, Partial: t.Progress}
	err = eachVariant(c, variants, w, func(name string, s position.Scheme) error {
		lengths, err := perplexity.ByLength(ctx, ev, s)
		rep.Results = append(rep.Results, Result{Scaling: name, Lengths: lengths})
		return err
	})
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// eachVariant calls score with each variant's name and its scheme of the config's evaluation
// scheme (built by NewVariant, or now), in order, and stops at the first error.
func eachVariant(c config.Config, variants []Variant, w io.Writer, score func(name string, s position.Scheme) error) error {
	for _, v := range variants {
		s := v.scheme
		if s == nil {
			var err error
			if s, err = v.build(c); err != nil {
				return err
			}
		}
		if w != nil {
			fmt.Fprintf(w, "scaling %s\n", v.Name())
		}
		if err := score(v.Name(), s); err != nil {
			return err
		}
	}
	return nil
}

// Write saves the report as CSV, JSON and a plot with a curve per scaling.
func (rep *Report) Write(dir string) error {
	if rep.Examples > 0 {
		return rep.writeTasks(dir)
	}
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	cw.Write(append([]string{"scaling"}, perplexity.Columns...))
	var curves []plot.Curve
	styles := rep.styles()
	for i, r := range rep.Results {
		for _, l := range r.Lengths {
			cw.Write(append([]string{r.Scaling}, perplexity.Row(l, rep.TrainLen, rep.Protocol)...))
		}
		c := perplexity.Curve(r.Scaling, []*measure.Result{{Lengths: r.Lengths}})
		c.Style = &styles[i]
		curves = append(curves, c)
	}
	cw.Flush()
	if err := measure.WriteFile(filepath.Join(dir, ScalingsCSV), b.Bytes()); err != nil {
		return err
	}
	if err := plot.Perplexity(dir, ScalingsPNG, ScalingsSVG, rep.Name+": one checkpoint under each RoPE scaling", rep.TrainLen, curves); err != nil {
		return err
	}
	return measure.WriteJSON(filepath.Join(dir, ScalingsJSON), rep)
}

// styles are the results' styles in the figures: each scaling's as RoPE's in every figure
// (plot.SchemeStyle of "rope+" its type, none plain RoPE's grey), a second result of one type
// (another factor) dashed.
func (rep *Report) styles() []plot.Style {
	var out []plot.Style
	for _, r := range rep.Results {
		key := "rope"
		if r.Scaling != "none" {
			typ, _, _ := strings.Cut(r.Scaling, "(")
			key += "+" + typ
		}
		s := plot.SchemeStyle(key)
		for k := 1; slices.ContainsFunc(out, func(t plot.Style) bool { return plot.Same(s, t) }); k++ {
			s = plot.Variant(plot.SchemeStyle(key), k)
		}
		out = append(out, s)
	}
	return out
}

// Table renders the report as a text table: a row per scaling, a column per length.
func (rep *Report) Table() string {
	var b bytes.Buffer
	if rep.Examples > 0 {
		return rep.tasksTable()
	}
	if len(rep.Results) == 0 {
		return ""
	}
	fmt.Fprintf(&b, "%-24s", "perplexity")
	for _, l := range rep.Results[0].Lengths {
		fmt.Fprintf(&b, " %9s", fmt.Sprintf("%d (%gx)", l.Length, float64(l.Length)/float64(rep.TrainLen)))
	}
	b.WriteByte('\n')
	var warnings []string
	for _, r := range rep.Results {
		fmt.Fprintf(&b, "%-24s", r.Scaling)
		for _, l := range r.Lengths {
			switch {
			case l.NonFinite:
				fmt.Fprintf(&b, " %9s", "nonfinite")
				warnings = append(warnings, fmt.Sprintf("warning: %s: %s at length %d\n", r.Scaling, l.Reason, l.Length))
			case l.Perplexity == nil:
				fmt.Fprintf(&b, " %9s", "n/a")
			default:
				fmt.Fprintf(&b, " %9.3f", *l.Perplexity)
			}
		}
		b.WriteByte('\n')
	}
	for _, w := range warnings {
		b.WriteString(w)
	}
	return b.String()
}
