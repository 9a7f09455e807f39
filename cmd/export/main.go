// Command export writes a trained checkpoint's model in a form other tools read: its weights as
// safetensors and a JSON config naming the scheme, its scaling and every setting needed to
// rebuild the model and score it as cmd/eval does. pytorch/load.py rebuilds it in PyTorch,
// pytorch/train.py trains it, and cmd/import reads it back. With -config it exports a config's
// model as train draws it before its first step, for pytorch/train.py to train from scratch.
//
//	go run ./cmd/export -checkpoint results/rope/model.ckpt -out results/rope/export
//	python3 pytorch/load.py results/rope/export
//	go run ./cmd/export -config rope -out results/rope_untrained
//
// Only the model's weights are exported, not the optimizer's state. An existing export is not
// replaced without -overwrite, and nothing is written unless both files can be made.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"extrapolate/experiments/config"
	"extrapolate/experiments/export"
	"extrapolate/experiments/training"
	"extrapolate/internal/atomicfile"
	"extrapolate/internal/exit"
	"extrapolate/internal/writable"
	_ "extrapolate/plugins" // schemes, tasks and measures from outside, in every command
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// options are the command's flags, parsed.
type options struct {
	ckpt, config, out  string
	sets               sets
	overwrite, partial bool
}

// sets are the -set flags, in order.
type sets []string

func (s *sets) String() string     { return strings.Join(*s, " ") }
func (s *sets) Set(v string) error { *s = append(*s, v); return nil }

// parseFlags reads args into options through c, which says on one line what is wrong with
// them; -h writes the usage to stdout and returns flag.ErrHelp.
func parseFlags(c *exit.Command, args []string, stdout io.Writer) (*options, error) {
	o := &options{}
	fs := flagSet(o)
	fs.SetOutput(stdout)
	fs.Usage = func() {
		fmt.Fprintln(stdout, "usage: export -checkpoint FILE [-out DIR] [-overwrite] [-partial]")
		fmt.Fprintln(stdout, "       export -config NAME [-set key=value]... -out DIR [-overwrite]")
		fmt.Fprintln(stdout)
		fs.PrintDefaults()
	}
	if err := c.Parse(fs, args); err != nil {
		return nil, err
	}
	switch {
	case o.ckpt != "" && o.config != "":
		return nil, fmt.Errorf("-checkpoint and -config: give one, a trained model or a config's untrained one")
	case o.ckpt == "" && o.config == "":
		return nil, fmt.Errorf("-checkpoint: missing; give the checkpoint to export (or -config, for a config's untrained model)")
	case o.config != "" && o.out == "":
		return nil, fmt.Errorf("-out: missing; give the folder to write the untrained model's export into")
	case o.config == "" && len(o.sets) > 0:
		return nil, fmt.Errorf("-set: only with -config")
	}
	if o.out == "" {
		o.out = filepath.Join(filepath.Dir(o.ckpt), "export")
	}
	return o, nil
}

// flagSet is the command's flags, bound to o.
func flagSet(o *options) *flag.FlagSet {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.StringVar(&o.ckpt, "checkpoint", "", "checkpoint file written by train (results/<name>/model.ckpt)")
	fs.StringVar(&o.config, "config", "", "instead of -checkpoint: a config file, or a bare name looked up in configs/, whose model is exported untrained, as train draws it")
	fs.Var(&o.sets, "set", "with -config: override a config field, key=value with a dotted key (repeatable), e.g. -set model.d_model=256")
	fs.StringVar(&o.out, "out", "", "folder to write "+export.WeightsFile+" and "+export.ConfigFile+" into (default: export/ beside the checkpoint)")
	fs.BoolVar(&o.overwrite, "overwrite", false, "replace an existing export in -out")
	fs.BoolVar(&o.partial, "partial", false, "export a checkpoint saved before training finished")
	return fs
}

// run exports as args ask and returns the exit status: 2 for anything the input gets wrong, 1
// for a failure to write, 130 when interrupted, having written nothing.
func run(args []string, stdout, stderr io.Writer) int {
	c := exit.New("export", stderr)
	_, stop := c.Signals("stopping: nothing will be written")
	defer stop()
	o, err := parseFlags(c, args, stdout)
	if err != nil {
		return c.Bad(err)
	}
	weights, config := filepath.Join(o.out, export.WeightsFile), filepath.Join(o.out, export.ConfigFile)
	if err := o.checkOut(weights, config); err != nil {
		return c.Bad(err)
	}
	t, what, err := o.model()
	if err != nil {
		return c.Bad(err)
	}
	e, err := export.New(t)
	if err == nil {
		err = c.Write(func() error { return write(o.out, weights, config, e) })
	}
	if err != nil {
		return c.Fail(err)
	}
	fmt.Fprintf(stdout, "exported %s (%s scheme, %d weights) to %s and %s\n", what, t.Config().Position.Scheme, len(t.Model.Params), weights, config)
	return 0
}

// model is the model to export, the checkpoint's or the config's untrained one, and what it
// is, to say.
func (o *options) model() (*training.Trained, string, error) {
	if o.config != "" {
		if err := config.Unknown(o.config); err != nil {
			return nil, "", err
		}
		r, err := config.LoadResolved(config.Resolve(o.config), o.sets)
		if err != nil {
			return nil, "", err
		}
		t, err := training.Untrained(r)
		return t, "the untrained model of " + r.Config().Name, err
	}
	t, err := training.LoadCheckpoint(o.ckpt)
	if err != nil {
		return nil, "", err
	}
	if !t.Finished && !o.partial {
		return nil, "", fmt.Errorf("%s: saved at %s, before training finished; finish it with train, or export it as it is with -partial", o.ckpt, t.Progress)
	}
	return t, o.ckpt, nil
}

// checkOut refuses an output folder that cannot be written, or that holds an export already
// when -overwrite is not given.
func (o *options) checkOut(files ...string) error {
	if err := writable.Check(o.out); err != nil {
		return fmt.Errorf("-out: %w", err)
	}
	if o.overwrite {
		return nil
	}
	for _, f := range files {
		if _, err := os.Lstat(f); err == nil {
			return fmt.Errorf("-out: %s exists; use -overwrite to replace it", f)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("-out: %w", err)
		}
	}
	return nil
}

// write writes the export's two files, each atomically. The weights go first, and are removed
// again if the config cannot be written, so that a failure leaves no export that is half new.
func write(dir, weights, config string, e *export.Files) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(weights, e.Weights); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(config, e.Config); err != nil {
		os.Remove(weights)
		return err
	}
	return nil
}
