// Command eval evaluates one trained checkpoint under several RoPE scalings at every evaluation
// length, so that the effect of a scaling is seen on the same weights, apart from training noise.
//
//	go run ./cmd/eval -checkpoint results/rope/model.ckpt -scaling none,linear,ntk,dynamic_ntk,yarn
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"extrapolate/experiments"
	"extrapolate/internal/scalingflag"
	"extrapolate/position"
)

func main() { os.Exit(run()) }

func run() int {
	var (
		ckpt     = flag.String("checkpoint", "", "checkpoint file written by train (results/<name>/model.ckpt)")
		scalings = flag.String("scaling", "", "comma-separated RoPE scalings to evaluate under; none is plain RoPE (default: none and every scaling the checkpoint's scheme takes: "+strings.Join(position.ScalingTypes(), ",")+" for RoPE, none alone for a scheme without rotation)")
		factor   = flag.String("factor", "auto", "scaling factor: a number ≥ 1, or auto (the ratio of each evaluation length to the training length)")
		lengths  = flag.String("lengths", "", "comma-separated evaluation lengths (default: the checkpoint config's)")
		tokens   = flag.Int("tokens", 0, "validation tokens scored at every length (default: the checkpoint config's)")
		out      = flag.String("out", "", "results folder (default: scalings/ beside the checkpoint)")
		quiet    = flag.Bool("quiet", false, "no progress output")
		partial  = flag.Bool("partial", false, "evaluate a checkpoint saved before training finished")
	)
	fields := scalingflag.Register(flag.CommandLine)
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: eval -checkpoint FILE [-scaling none,linear,...] [-factor auto|N] [-lengths 64,128,...] [-out DIR]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *ckpt == "" || flag.NArg() > 0 {
		flag.Usage()
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "eval:", err)
		return 2
	}
	f, err := position.ParseFactor(*factor)
	if err != nil {
		return fail(fmt.Errorf("-factor: %v", err))
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join(filepath.Dir(*ckpt), "scalings")
	}
	// Before evaluating, which takes long, so that its results have somewhere to go.
	if err := experiments.CheckWritable(dir); err != nil {
		return fail(err)
	}
	t, err := experiments.LoadCheckpoint(*ckpt)
	if err != nil {
		return fail(err)
	}
	if !t.Finished && !*partial {
		return fail(fmt.Errorf("%s: saved at %s, before training finished; finish it with train, or evaluate it as it is with -partial", *ckpt, t.Progress))
	}
	var list []*position.Scaling
	var names []string
	if *scalings == "" {
		names = takes(t.Config)
	} else {
		names = strings.Split(*scalings, ",")
		for i := range names {
			names[i] = strings.TrimSpace(names[i])
		}
	}
	if u := fields.Unused(names); u != "" {
		return fail(fmt.Errorf("%s: none of the scalings %s takes it", u, strings.Join(names, ",")))
	}
	for _, name := range names {
		if name == "none" {
			list = append(list, nil)
			continue
		}
		sc := fields.Scaling(name, f)
		pc := t.Config.Position
		pc.Scaling = sc
		c := t.Config
		if _, err := position.New(c.Spec(pc)); err != nil {
			return fail(fmt.Errorf("-scaling %s: %v", name, err))
		}
		list = append(list, sc)
	}
	e := t.Config.Eval
	if *lengths != "" {
		e.Lengths = nil
		for _, s := range strings.Split(*lengths, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil {
				return fail(fmt.Errorf("-lengths: %q is not a length", s))
			}
			e.Lengths = append(e.Lengths, n)
		}
	}
	if *tokens != 0 {
		e.Tokens = *tokens
	}
	check := t.Config
	check.Eval = e
	if err := check.Check(); err != nil {
		return fail(fmt.Errorf("-lengths/-tokens: %v", err))
	}
	w := os.Stderr
	if *quiet {
		w = nil
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	rep, err := experiments.EvaluateScalings(ctx, t, list, e, w)
	if errors.Is(err, experiments.ErrInterrupted) {
		fmt.Fprintln(os.Stderr, "eval: interrupted; nothing written")
		return 130
	}
	if experiments.IsInputError(err) {
		return fail(err)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "eval:", err)
		return 1
	}
	rep.Checkpoint = *ckpt
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "eval:", err)
		return 1
	}
	if err := rep.Write(dir); err != nil {
		fmt.Fprintln(os.Stderr, "eval:", err)
		return 1
	}
	if t.Progress != "" {
		fmt.Printf("partly trained: checkpoint saved at %s\n", t.Progress)
	}
	fmt.Print(rep.Table())
	fmt.Printf("results in %s\n", dir)
	return 0
}

// takes lists none and every registered scaling that the checkpoint's scheme takes: the default
// of -scaling. A list of every type would fail on any scheme without a rotation. Each is tried
// at its defaults, so that a bad -factor or field is still reported below, not left out.
func takes(c experiments.Config) []string {
	names := []string{"none"}
	for _, name := range position.ScalingTypes() {
		pc := c.Position
		pc.Scaling = &position.Scaling{Type: name, Factor: position.Factor{Auto: true}}
		if _, err := position.New(c.Spec(pc)); err == nil {
			names = append(names, name)
		}
	}
	return names
}
