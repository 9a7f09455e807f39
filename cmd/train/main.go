// Command train trains a small language model with one position scheme at a short length,
// evaluates its perplexity at that length and longer ones, and writes the curve and the weights
// under results/<name>/.
//
//	go run ./cmd/train -config rope              # configs/rope.yaml
//	go run ./cmd/train -config my.yaml -set train.steps=300 -set eval.lengths=[64,256]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"extrapolate/experiments"
)

type sets []string

func (s *sets) String() string     { return strings.Join(*s, " ") }
func (s *sets) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	os.Exit(run())
}

func run() int {
	var (
		config    = flag.String("config", "", "config file, or a bare name looked up in configs/ (e.g. rope)")
		out       = flag.String("out", "", "results folder (default results/<name>)")
		overwrite = flag.Bool("overwrite", false, "replace a finished run of a different config, and start afresh instead of resuming")
		quiet     = flag.Bool("quiet", false, "no progress output")
		overrides sets
	)
	flag.Var(&overrides, "set", "override a config field, key=value with a dotted key (repeatable), e.g. -set train.steps=300")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: train -config NAME [-set key=value]... [-out DIR] [-overwrite]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *config == "" || flag.NArg() > 0 {
		flag.Usage()
		return 2
	}
	path := experiments.Resolve(*config)
	cfg, err := experiments.Load(path, overrides)
	if err != nil {
		fmt.Fprintln(os.Stderr, "train:", err)
		return 2
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join("results", cfg.Name)
	}
	r := &experiments.Run{Config: cfg, Dir: dir, Overwrite: *overwrite, Progress: os.Stderr}
	if *quiet {
		r.Progress = nil
	}
	if err := r.Prepare(); err != nil {
		fmt.Fprintln(os.Stderr, "train:", err)
		return 2
	}
	ctx, stop := interrupts()
	defer stop()
	res, err := r.Execute(ctx)
	switch {
	case errors.Is(err, experiments.ErrInterrupted):
		fmt.Fprintf(os.Stderr, "train: %v\nresume with: %s\n", err, resumeCommand())
		return 130
	case err != nil:
		fmt.Fprintln(os.Stderr, "train:", err)
		return 1
	}
	fmt.Print(experiments.Summary(res))
	fmt.Printf("results in %s\n", dir)
	return 0
}

// interrupts returns a context cancelled by the first SIGINT or SIGTERM, so training can save a
// checkpoint and stop; a second signal exits at once (checkpoints are written atomically, so the
// last one stays whole).
func interrupts() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ch
		fmt.Fprintln(os.Stderr, "\ntrain: stopping after this step to save a checkpoint (again to quit at once)")
		cancel()
		<-ch
		fmt.Fprintln(os.Stderr, "train: quitting")
		os.Exit(130)
	}()
	return ctx, func() { signal.Stop(ch); cancel() }
}

func resumeCommand() string {
	args := []string{"go", "run", "./cmd/train"}
	for _, a := range os.Args[1:] {
		if a != "-overwrite" && a != "--overwrite" {
			args = append(args, a)
		}
	}
	return strings.Join(args, " ")
}
