// Command inspect shows a position scheme's numbers, as JSON, or draws a picture of them.
//
//	go run ./cmd/inspect -scheme rope -scaling yarn -dim 16 -base 10000 -train-len 128 -eval-len 512 -factor 4 -json
//	go run ./cmd/inspect -scheme alibi -heads 8 -eval-len 32        # draws inspect_alibi.png
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"

	"extrapolate/internal/atomicfile"
	"extrapolate/position"
)

// report is what -json prints; each scheme fills its part.
type report struct {
	Scheme   string `json:"scheme"`
	Scaling  string `json:"scaling,omitempty"`
	Dim      int    `json:"dim,omitempty"`
	Heads    int    `json:"heads,omitempty"`
	TrainLen int    `json:"train_len"`
	EvalLen  int    `json:"eval_len"`
	Factor   string `json:"factor,omitempty"`
	// The RoPE family: frequencies in radians per position, their wavelengths in positions,
	// and the factor that scales cos and sin.
	Base            float64   `json:"base,omitempty"`
	InvFreq         []float64 `json:"inv_freq,omitempty"`
	Wavelengths     []float64 `json:"wavelengths,omitempty"`
	AttentionFactor float64   `json:"attention_factor,omitempty"`
	// ALiBi: each head's slope.
	Slopes []float64 `json:"slopes,omitempty"`
	// Sinusoidal: the eval_len × dim table.
	Table [][]float64 `json:"table,omitempty"`
}

// Bounds on the flags. maxTable bounds the numbers of a table or picture: drawing that many
// takes some seconds.
const (
	maxDim   = 1 << 13
	maxHeads = 1 << 10
	maxTable = 1 << 22
)

func main() { os.Exit(run()) }

func run() int {
	var (
		scheme   = flag.String("scheme", "rope", "position scheme: "+fmt.Sprint(position.Names()))
		scaling  = flag.String("scaling", "none", "RoPE scaling: none, linear, ntk, dynamic_ntk or yarn")
		dim      = flag.Int("dim", 64, "width: RoPE's head dimension, or the sinusoidal table's d_model")
		heads    = flag.Int("heads", 1, "attention heads (ALiBi's slopes)")
		base     = flag.Float64("base", 10000, "RoPE's base")
		trainLen = flag.Int("train-len", 128, "training length L")
		evalLen  = flag.Int("eval-len", 512, "evaluation length n")
		factor   = flag.String("factor", "auto", "scaling factor: a number ≥ 1, or auto = max(1, n/L)")
		betaFast = flag.Float64("beta-fast", 32, "YaRN's beta_fast")
		betaSlow = flag.Float64("beta-slow", 1, "YaRN's beta_slow")
		asJSON   = flag.Bool("json", false, "print the numbers as JSON instead of drawing")
		out      = flag.String("out", "", "picture file (default inspect_<scheme>.png)")
	)
	flag.Parse()
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "inspect:", err)
		return 2
	}
	if flag.NArg() > 0 {
		return fail(fmt.Errorf("unexpected argument %q", flag.Arg(0)))
	}
	// The upper bounds are a config's (model.d_model, model.heads): nothing larger is trained
	// here, and they keep the numbers printed or drawn to a size that takes a moment.
	switch {
	case *dim <= 0 || *dim > maxDim:
		return fail(fmt.Errorf("-dim: %d, want a number from 1 to %d", *dim, maxDim))
	case *heads <= 0 || *heads > maxHeads:
		return fail(fmt.Errorf("-heads: %d, want a number from 1 to %d", *heads, maxHeads))
	case *scheme == "sinusoidal" && *dim**evalLen > maxTable:
		return fail(fmt.Errorf("-dim and -eval-len: a sinusoidal table of %d × %d, above the limit of %d numbers", *evalLen, *dim, maxTable))
	case !*asJSON && *scheme == "alibi" && *heads**evalLen**evalLen > maxTable:
		// The picture has one eval-len × eval-len map per head.
		return fail(fmt.Errorf("-heads and -eval-len: %d maps of %d × %d to draw, above the limit of %d cells; use fewer heads, a shorter -eval-len or -json", *heads, *evalLen, *evalLen, maxTable))
	case *trainLen <= 0:
		return fail(fmt.Errorf("-train-len: %d, want a positive number", *trainLen))
	case *evalLen <= 0 || *evalLen > 1<<16:
		return fail(fmt.Errorf("-eval-len: %d, want a number from 1 to 65536", *evalLen))
	}
	pc := position.Config{Scheme: *scheme}
	if *scheme == "rope" {
		pc.Base = *base
	}
	if *scaling != "none" {
		f, err := position.ParseFactor(*factor)
		if err != nil {
			return fail(fmt.Errorf("-factor: %v", err))
		}
		pc.Scaling = &position.Scaling{Type: *scaling, Factor: f}
		if *scaling == "yarn" {
			pc.Scaling.BetaFast, pc.Scaling.BetaSlow = *betaFast, *betaSlow
		}
	}
	// A RoPE head of width dim; other schemes take the model width as dim and heads as given.
	spec := position.Spec{DModel: *dim * *heads, Heads: *heads, TrainLen: *trainLen, Config: pc}
	if *scheme == "sinusoidal" {
		spec.DModel, spec.Heads = *dim, 1
	}
	s, err := position.New(spec)
	if err != nil {
		return fail(flagNames(err))
	}
	rep := report{Scheme: *scheme, TrainLen: *trainLen, EvalLen: *evalLen}
	if pc.Scaling != nil {
		rep.Scaling, rep.Factor = pc.Scaling.Type, pc.Scaling.Factor.String()
	}
	if r, ok := s.(*position.RoPE); ok {
		rep.Dim, rep.Base = *dim, r.Base
		rep.InvFreq, rep.AttentionFactor = r.Frequencies(*evalLen)
		for _, f := range rep.InvFreq {
			rep.Wavelengths = append(rep.Wavelengths, 2*math.Pi/f)
		}
	}
	if a, ok := s.(position.ALiBi); ok {
		rep.Heads, rep.Slopes = *heads, a.Slopes
	}
	if _, ok := s.(position.Sinusoidal); ok {
		t, err := s.Embedding(*evalLen)
		if err != nil {
			return fail(err)
		}
		rep.Dim = *dim
		for i := 0; i < t.Rows; i++ {
			rep.Table = append(rep.Table, t.Values[i*t.Cols:(i+1)*t.Cols])
		}
	}
	if *asJSON {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return fail(err)
		}
		fmt.Println(string(b))
		return 0
	}
	path := *out
	if path == "" {
		path = "inspect_" + *scheme + ".png"
	}
	png, err := picture(s, rep)
	if err != nil {
		return fail(err)
	}
	if err := atomicfile.WriteFile(path, png); err != nil {
		fmt.Fprintln(os.Stderr, "inspect:", err)
		return 1
	}
	fmt.Println("wrote", path)
	return 0
}

// flagNames rewords a config error for the command line.
func flagNames(err error) error {
	msg := err.Error()
	for _, r := range [][2]string{
		{"position.scaling.type", "-scaling"}, {"position.scaling.factor", "-factor"},
		{"position.scaling.beta_fast", "-beta-fast"}, {"position.scaling", "-scaling"},
		{"position.scheme", "-scheme"}, {"position.base", "-base"},
	} {
		if len(msg) >= len(r[0]) && msg[:len(r[0])] == r[0] {
			return errors.New(r[1] + msg[len(r[0]):])
		}
	}
	return err
}
