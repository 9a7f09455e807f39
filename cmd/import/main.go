// Command import reads a model in the layout cmd/export writes — model.safetensors and its
// config.json, as pytorch/train.py writes them after training or fine-tuning in PyTorch — back
// into a checkpoint that cmd/eval, cmd/sample and cmd/inspect take.
//
//	go run ./cmd/export -checkpoint examples/checkpoints/rope_ntk.ckpt -out results/rope_ntk_export
//	/usr/bin/python3 pytorch/train.py results/rope_ntk_export --finetune-len 256 --finetune-steps 100 --out results/rope_ntk_ft
//	go run ./cmd/import -export results/rope_ntk_ft
//	go run ./cmd/eval -checkpoint results/rope_ntk_ft/model.ckpt
//
// The checkpoint's config is config.json's train_config with its name, train section and
// scaling over it; everything else config.json states must be what that config builds, and
// every weight must be one its model has, of its shape. float64 weights are rounded to the
// float32 the model computes in. A bad export is one line on stderr naming the file and the
// field or weight, exit status 2; the checkpoint is written atomically, and an existing one is
// not replaced without -overwrite.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"extrapolate/experiments/export"
	"extrapolate/experiments/measure"
	"extrapolate/internal/exit"
	"extrapolate/internal/writable"
	_ "extrapolate/plugins" // schemes, tasks and measures from outside, in every command
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// options are the command's flags, parsed.
type options struct {
	export, out string
	overwrite   bool
}

// parseFlags reads args into options through c, which says on one line what is wrong with
// them; -h writes the usage to stdout and returns flag.ErrHelp.
func parseFlags(c *exit.Command, args []string, stdout io.Writer) (*options, error) {
	o := &options{}
	fs := flagSet(o)
	fs.SetOutput(stdout)
	fs.Usage = func() {
		fmt.Fprintln(stdout, "usage: import -export DIR [-out FILE] [-overwrite]")
		fmt.Fprintln(stdout)
		fs.PrintDefaults()
	}
	if err := c.Parse(fs, args); err != nil {
		return nil, err
	}
	if o.export == "" {
		return nil, fmt.Errorf("-export: missing; give the folder of config.json and model.safetensors to import")
	}
	if o.out == "" {
		o.out = filepath.Join(o.export, measure.CheckpointFile)
	}
	return o, nil
}

// flagSet is the command's flags, bound to o.
func flagSet(o *options) *flag.FlagSet {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.StringVar(&o.export, "export", "", "folder holding "+export.ConfigFile+" and "+export.WeightsFile+", as cmd/export and pytorch/train.py write them")
	fs.StringVar(&o.out, "out", "", "checkpoint file to write (default: "+measure.CheckpointFile+" in the -export folder)")
	fs.BoolVar(&o.overwrite, "overwrite", false, "replace an existing checkpoint at -out")
	return fs
}

// run imports as args ask and returns the exit status: 2 for anything the input gets wrong,
// 130 when interrupted, 1 for a failure to write.
func run(args []string, stdout, stderr io.Writer) int {
	c := exit.New("import", stderr)
	_, stop := c.Signals("stopping: nothing will be written")
	defer stop()
	o, err := parseFlags(c, args, stdout)
	if err != nil {
		return c.Bad(err)
	}
	if err := o.checkOut(); err != nil {
		return c.Bad(err)
	}
	im, err := export.Import(o.export)
	if err == nil {
		err = c.Write(func() error { return im.Write(o.out) })
	}
	if err != nil {
		return c.Fail(err)
	}
	note := ""
	if im.Rounded() {
		note = ", its float64 weights rounded to float32"
	}
	fmt.Fprintf(stdout, "imported %s (%s, %s scheme, %d weights%s) to %s\n", o.export, im.Config().Name, im.Config().Position.Scheme, len(im.Model.Params), note, o.out)
	return 0
}

// checkOut refuses a checkpoint path whose folder cannot be written, or that holds a file
// already when -overwrite is not given.
func (o *options) checkOut() error {
	if err := writable.Check(filepath.Dir(o.out)); err != nil {
		return fmt.Errorf("-out: %w", err)
	}
	st, err := os.Lstat(o.out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("-out: %w", err)
	case st.IsDir():
		return fmt.Errorf("-out: %s is a folder; give the checkpoint file's path", o.out)
	case !o.overwrite:
		return fmt.Errorf("-out: %s exists; use -overwrite to replace it", o.out)
	}
	return nil
}
