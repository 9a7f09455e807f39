// Command eval evaluates one trained checkpoint under several RoPE scalings and distance maps at
// every evaluation length, so that the effect of a scaling or a map is seen on the same weights,
// apart from training noise. A checkpoint trained on tasks is scored on its tasks instead: exact
// match at every test size, on the held-out examples its run was scored on. A checkpoint trained
// at randomized positions (train.positions type randomized) is scored, as in training, with each
// window at its own sorted draw of positions from the range it trained on.
//
//	go run ./cmd/eval -checkpoint examples/checkpoints/rope_ntk.ckpt -scaling none,linear,ntk,dynamic_ntk,yarn
//	go run ./cmd/eval -checkpoint examples/checkpoints/rope_ntk.ckpt -map none,rerope,leaky_rerope,self_extend:group=4,string
//	go run ./cmd/eval -checkpoint results/tasks_ci/runs/rope-s1/model.ckpt -scaling none,yarn
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"extrapolate/cmd/internal/scalingflag"
	"extrapolate/experiments/config"
	"extrapolate/experiments/evaluate"
	"extrapolate/experiments/training"
	"extrapolate/internal/exit"
	"extrapolate/internal/writable"
	_ "extrapolate/plugins" // schemes, tasks and measures from outside, in every command
	"extrapolate/position"
)

func main() { os.Exit(run()) }

// options are the command's flags, parsed.
type options struct {
	ckpt, scalings, factor, lengths, out string
	maps                                 string
	tokens, examples                     int
	quiet, partial, overwrite            bool
	fields                               *scalingflag.Set
	// scalingGiven says -scaling was given, so that an empty one (an unset shell variable) is
	// refused rather than read as the default.
	scalingGiven bool
	mapGiven     bool
}

// parseFlags reads the command line into options, or says on one line what is wrong with it.
func parseFlags(c *exit.Command) (*options, error) {
	o := &options{}
	flag.StringVar(&o.ckpt, "checkpoint", "", "checkpoint file written by train (results/<name>/model.ckpt)")
	flag.StringVar(&o.scalings, "scaling", "", "comma-separated RoPE scalings to evaluate under; none is plain RoPE (default: none and every scaling the checkpoint's scheme takes: "+strings.Join(position.ScalingTypes(), ",")+" for RoPE, none alone for a scheme without rotation)")
	flag.StringVar(&o.maps, "map", "", "comma-separated distance maps to evaluate through, each none or a type with its fields after colons: "+strings.Join(position.DistanceMapTypes(), ",")+", e.g. rerope:window=16 (default: the checkpoint config's own, none for most); with -map and no -scaling, the scaling is none")
	flag.StringVar(&o.factor, "factor", "auto", "scaling factor: a number ≥ 1, or auto (the ratio of each evaluation length to the training length)")
	flag.StringVar(&o.lengths, "lengths", "", "comma-separated evaluation lengths (default: the checkpoint config's)")
	flag.IntVar(&o.tokens, "tokens", 0, "validation tokens scored at every length (default: the checkpoint config's)")
	flag.IntVar(&o.examples, "examples", 0, "a task checkpoint's held-out examples scored at each size (default, or 0: the checkpoint config's task.examples)")
	flag.StringVar(&o.out, "out", "", "results folder (default: scalings/ beside the checkpoint)")
	flag.BoolVar(&o.quiet, "quiet", false, "no progress output")
	flag.BoolVar(&o.partial, "partial", false, "evaluate a checkpoint saved before training finished")
	flag.BoolVar(&o.overwrite, "overwrite", false, "replace the results of a different evaluation in -out (those of the same checkpoint and flags are replaced without it)")
	o.fields = scalingflag.Register(flag.CommandLine)
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: eval -checkpoint FILE [-scaling none,linear,...] [-factor auto|N] [-map none,rerope,...] [-lengths 64,128,...] [-out DIR] [-overwrite]\n\n")
		fmt.Fprintf(flag.CommandLine.Output(), "A checkpoint trained at randomized positions (train.positions type randomized) is scored as in\ntraining: each window at its own sorted draw of positions from the range it trained on, seeded by\nthe run's seed and the window; a length past the range is not applicable, and -map is refused.\n\n")
		flag.PrintDefaults()
	}
	if err := c.Parse(flag.CommandLine, os.Args[1:]); err != nil {
		return nil, err
	}
	if o.ckpt == "" {
		return nil, errors.New("-checkpoint: missing; give the checkpoint file to evaluate (results/<name>/model.ckpt; -h lists the flags)")
	}
	flag.Visit(func(f *flag.Flag) {
		o.scalingGiven = o.scalingGiven || f.Name == "scaling"
		o.mapGiven = o.mapGiven || f.Name == "map"
	})
	return o, nil
}

// run evaluates the checkpoint as the flags ask and returns the exit code: 2 for anything the
// input gets wrong, 130 when interrupted, 1 for any other failure.
func run() int {
	c := exit.New("eval", os.Stderr)
	o, err := parseFlags(c)
	fail := c.Bad
	if err != nil {
		return fail(err)
	}
	f, err := position.ParseFactor(o.factor)
	if err != nil {
		return fail(fmt.Errorf("-factor: %v", err))
	}
	dir := o.out
	if dir == "" {
		dir = filepath.Join(filepath.Dir(o.ckpt), "scalings")
	}
	// Before evaluating, which takes long, so that its results have somewhere to go.
	if err := writable.Check(dir); err != nil {
		return fail(err)
	}
	t, err := training.LoadCheckpoint(o.ckpt)
	if err != nil {
		return fail(err)
	}
	if !t.Finished && !o.partial {
		return fail(fmt.Errorf("%s: saved at %s, before training finished; finish it with train, or evaluate it as it is with -partial", o.ckpt, t.Progress))
	}
	if t, err = o.applyTasks(t); err != nil {
		return fail(err)
	}
	cfg := t.Config()
	maps := []*position.DistanceMapConfig{cfg.Position.DistanceMap}
	if o.mapGiven {
		if maps, err = parseMaps(o.maps); err != nil {
			return fail(err)
		}
	}
	list, err := o.variants(cfg, f, maps)
	if err != nil {
		return fail(err)
	}
	at, err := positionsLine(cfg, t.Resolved.PositionIDs(), maps)
	if err != nil {
		return fail(err)
	}
	t, memory, err := o.evalSettings(t)
	if err != nil {
		return fail(err)
	}
	if cfg.Task != nil {
		memory = fmt.Sprintf("scored in batches of up to %d tokens (eval.batch_tokens), at least one window each", t.Config().Eval.BatchTokens)
	}
	if at != "" {
		memory += "\n" + at
	}
	req := o.request(t, list)
	if err := checkOut(dir, o.ckpt, req, o.overwrite); err != nil {
		return fail(err)
	}
	return o.evaluate(c, t, list, req, memory, dir)
}

// applyTasks is the checkpoint with -examples applied, a new value, for one trained on tasks;
// it refuses the flags that choose what is scored on the corpus, which such a checkpoint is not
// scored on, and -examples for one trained on the corpus.
func (o *options) applyTasks(t *training.Trained) (*training.Trained, error) {
	tc := t.Config().Task
	if tc == nil {
		if o.examples != 0 {
			return nil, fmt.Errorf("-examples: %s was trained on the corpus, not on tasks; it is scored at -lengths on -tokens", o.ckpt)
		}
		return t, nil
	}
	if o.lengths != "" || o.tokens != 0 {
		return nil, fmt.Errorf("-lengths/-tokens: %s was trained on tasks (%s) and is scored on their held-out examples at every test size, not on the corpus; -examples sets how many", o.ckpt, strings.Join(tc.Names, ", "))
	}
	if o.examples == 0 {
		return t, nil
	}
	u, err := t.WithExamples(o.examples)
	if err != nil {
		return nil, fmt.Errorf("-examples: %v", strings.TrimPrefix(err.Error(), "task.examples: "))
	}
	return u, nil
}

// evalSettings is the checkpoint with -lengths and -tokens applied to its config's evaluation, a
// new value, checked as a config's would be, and what it takes in memory, to state. The evaluation
// is tiled, so any length whose batch fits in memory can be scored: where the longest length
// exceeds the config's eval.batch_tokens, which a run needs at least the longest length, the
// batches are raised to hold one window of it, and the memory check applies to that.
//
// Each length and -tokens is checked against the config's limit here, naming the flag, before
// anything is computed from it: nothing below adds or multiplies sizes larger than these.
func (o *options) evalSettings(t *training.Trained) (*training.Trained, string, error) {
	e := t.Config().Eval
	if o.lengths != "" {
		e.Lengths = nil
		for _, s := range strings.Split(o.lengths, ",") {
			s = strings.TrimSpace(s)
			n, err := strconv.Atoi(s)
			switch {
			case errors.Is(err, strconv.ErrRange) && strings.HasPrefix(s, "-"), err == nil && n <= 0:
				return nil, "", fmt.Errorf("-lengths: %s, want positive lengths", s)
			case errors.Is(err, strconv.ErrRange):
				return nil, "", fmt.Errorf("-lengths: %s, above the limit of %d, the longest length eval takes", s, config.MaxEvalLength)
			case err != nil:
				return nil, "", fmt.Errorf("-lengths: %q is not a length", s)
			case n > config.MaxEvalLength:
				return nil, "", fmt.Errorf("-lengths: %d, above the limit of %d, the longest length eval takes", n, config.MaxEvalLength)
			}
			e.Lengths = append(e.Lengths, n)
		}
	}
	switch {
	case o.tokens < 0:
		return nil, "", fmt.Errorf("-tokens: %d, want a positive number", o.tokens)
	case o.tokens > config.MaxEvalTokens:
		return nil, "", fmt.Errorf("-tokens: %d, above the limit of %d", o.tokens, config.MaxEvalTokens)
	case o.tokens != 0:
		e.Tokens = o.tokens
	}
	batches := fmt.Sprintf("eval.batch_tokens %d", e.BatchTokens)
	if n := slices.Max(e.Lengths); n > e.BatchTokens {
		batches = fmt.Sprintf("eval.batch_tokens %d, raised to the longest length", e.BatchTokens)
		e.BatchTokens = n
	}
	u, err := t.WithEval(e)
	if err != nil {
		return nil, "", fmt.Errorf("-lengths/-tokens: %v", err)
	}
	return u, fmt.Sprintf("evaluated in batches of up to %d tokens (%s), needing %s", e.BatchTokens, batches, u.Resolved.Memory().Evaluation()), nil
}

// evaluate scores the trained model under each variant of list, writes the results in dir with
// the request that asked for them and prints their table, returning the exit code. Nothing is
// written when interrupted, and the results are written whole once started (exit.Command.Write).
// With -overwrite, results of the other kind (a corpus checkpoint's beside a task checkpoint's)
// are removed once the new ones are written, so that the folder holds one evaluation's.
func (o *options) evaluate(c *exit.Command, t *training.Trained, list []evaluate.Variant, req *evaluate.Request, memory, dir string) int {
	w := os.Stderr
	if o.quiet {
		w = nil
	}
	ctx, stop := c.Signals("stopping: nothing will be written")
	defer stop()
	rep, err := evaluate.Variants(ctx, t, list, w)
	if err != nil {
		return c.Fail(err)
	}
	rep.Checkpoint, rep.Request = o.ckpt, req
	err = c.Write(func() error {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := rep.Write(dir); err != nil || !o.overwrite {
			return err
		}
		return removeOthers(dir, req)
	})
	if err != nil {
		return c.Fail(err)
	}
	if t.Progress != "" {
		fmt.Printf("partly trained: checkpoint saved at %s\n", t.Progress)
	}
	fmt.Print(rep.Table())
	fmt.Println(memory)
	fmt.Printf("results in %s\n", dir)
	return 0
}
