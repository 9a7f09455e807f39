package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"extrapolate/experiments/config"
	"extrapolate/experiments/export"
	"extrapolate/experiments/training"
	"extrapolate/internal/cmdtest"
	"extrapolate/internal/exporttest"
	"extrapolate/position"
)

// trainPy runs pytorch/train.py on the export in dir into out, with its flags args.
func trainPy(t *testing.T, dir, out string, args ...string) {
	t.Helper()
	cmd := exec.Command(exporttest.Python, append([]string{exporttest.Script("train.py"), dir, "--out", out, "--quiet"}, args...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("train.py %s: %v\n%s", dir, err, b)
	}
}

// TestTorchStepRoundTrip is the round trip through PyTorch: a tiny trained checkpoint exported,
// one AdamW step taken in PyTorch (pytorch/train.py, a fine-tune of one step at twice the
// training length), saved, imported; cmd/eval's losses of the checkpoint must be PyTorch's of
// the stepped model (pytorch/load.py in float64) within the loader test's tolerance, the
// checkpoint's config must record the fine-tune, and the step must have moved the losses by
// far more than the tolerance, so that importing the weights from before it would fail. The
// variants' weights carry every per-weight setting the optimizer reads (KERPLE's floors, T5's
// learning-rate multiple, weight decay or none; a temperature's, the sinks' and a gate's
// weights), and one fine-tunes under a scaling given to it.
func TestTorchStepRoundTrip(t *testing.T) {
	exporttest.NeedTorch(t)
	variants := []struct {
		name  string
		set   func(c *config.Config)
		flags []string
	}{
		{"rope_yarn", func(c *config.Config) {}, []string{"--scaling", "yarn", "--factor", "2"}},
		{"kerple", func(c *config.Config) { c.Position = position.Config{Scheme: "kerple"} }, nil},
		{"t5_ssmax_sinks_gate", func(c *config.Config) {
			c.Position, c.Attention.Scale, c.Attention.Sinks, c.Attention.Gate = position.Config{Scheme: "t5"}, "ssmax", true, "headwise"
		}, nil},
	}
	var exported, stepped, ckpts []string
	for _, v := range variants {
		dir, out := filepath.Join(t.TempDir(), "export"), filepath.Join(t.TempDir(), "stepped")
		exportTo(t, exporttest.TrainTiny(t, v.set), dir)
		trainPy(t, dir, out, append([]string{"--finetune-len", "32", "--finetune-steps", "1", "--finetune-lr", "0.001"}, v.flags...)...)
		ckpt := filepath.Join(t.TempDir(), "model.ckpt")
		importTo(t, out, ckpt)
		exported, stepped, ckpts = append(exported, dir), append(stepped, out), append(ckpts, ckpt)
	}
	before, after := exporttest.LoaderScores(t, exported), exporttest.LoaderScores(t, stepped)
	for i, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			tr, err := training.LoadCheckpoint(ckpts[i])
			if err != nil {
				t.Fatal(err)
			}
			if f := tr.Config().Train.Finetune; !tr.Finished || f == nil || f.SeqLen != 32 || f.Steps != 1 || f.LR != 0.001 {
				t.Errorf("finished %v, train.finetune %+v; want a finished fine-tune of 1 step at 32, lr 0.001", tr.Finished, f)
			}
			if sc := tr.Config().Position.Scaling; (v.flags != nil) != (sc != nil && sc.Type == "yarn" && sc.Factor.Value == 2) {
				t.Errorf("position.scaling %+v, want yarn at 2 for %v", sc, v.flags)
			}
			worst := exporttest.Compare(t, exporttest.EvalScores(t, ckpts[i], nil), after[i])
			moved := math.Abs(after[i]["none"][16]-before[i]["none"][16]) / before[i]["none"][16]
			if moved < 100*exporttest.Tolerance {
				t.Errorf("the step moved the loss at 16 by %.2g relative, not clearly more than the tolerance %g", moved, exporttest.Tolerance)
			}
			t.Logf("worst relative difference %.2g; the step moved the loss by %.2g", worst, moved)
		})
	}
}

// TestTorchFromScratch trains a config from scratch in PyTorch: cmd/export's untrained model of
// a config with a fine-tune (RoPE, position interpolation at 2x), 40 steps of its main phase
// and its 10 of fine-tuning in pytorch/train.py, then imports it. cmd/eval must score the
// checkpoint as PyTorch scores the trained model, the config must record the steps trained,
// and training must have taught the model something: its loss well below the untrained one's.
func TestTorchFromScratch(t *testing.T) {
	exporttest.NeedTorch(t)
	path := filepath.Join(t.TempDir(), "scratch.yaml")
	writeFile(t, path, []byte("name: scratch\ndata: {corpus: text, path: "+cmdtest.TextCorpus(t)+"}\n"+
		"model: {d_model: 16, layers: 2, heads: 2}\nposition: {scheme: rope, scaling: {type: linear, factor: 2}}\n"+
		"train: {seq_len: 16, batch_size: 8, steps: 150, lr: 1.0e-2, finetune: {seq_len: 32, steps: 10}}\n"+
		"eval: {lengths: [16, 32, 64], tokens: 256, batch_tokens: 128}\n"))
	r, err := config.LoadResolved(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	untrained, err := training.Untrained(r)
	if err != nil {
		t.Fatal(err)
	}
	e, err := export.New(untrained)
	if err != nil {
		t.Fatal(err)
	}
	dir, out := filepath.Join(t.TempDir(), "untrained"), filepath.Join(t.TempDir(), "trained")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, export.WeightsFile), e.Weights)
	writeFile(t, filepath.Join(dir, export.ConfigFile), e.Config)
	trainPy(t, dir, out, "--steps", "40")
	ckpt := filepath.Join(t.TempDir(), "model.ckpt")
	importTo(t, out, ckpt)
	tr, err := training.LoadCheckpoint(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	if c := tr.Config().Train; !tr.Finished || c.Steps != 40 || c.Finetune == nil || c.Finetune.Steps != 10 || fmt.Sprint(*c.Warmup) != "15" {
		t.Errorf("finished %v, train %+v; want 40 steps, warmup 15 and the fine-tune of 10", tr.Finished, c)
	}
	scores := exporttest.LoaderScores(t, []string{dir, out})
	worst := exporttest.Compare(t, exporttest.EvalScores(t, ckpt, nil), scores[1])
	was, now := scores[0]["none"][16], scores[1]["none"][16]
	if !(now < was-1) {
		t.Errorf("loss at 16: %.3f untrained, %.3f trained; want it lower by more than 1", was, now)
	}
	t.Logf("worst relative difference %.2g; loss at 16 from %.3f to %.3f", worst, was, now)
}

// TestTrainPyBadInput gives pytorch/train.py flags and exports it cannot train or could not
// record: each must be one line on stderr naming the flag, field or file, exit status 2, and
// nothing in --out but what was there.
func TestTrainPyBadInput(t *testing.T) {
	exporttest.NeedTorch(t)
	good, learned := filepath.Join(t.TempDir(), "rope"), filepath.Join(t.TempDir(), "learned")
	exportTo(t, exporttest.TrainTiny(t, func(c *config.Config) {}), good)
	exportTo(t, exporttest.TrainTiny(t, func(c *config.Config) { c.Position = position.Config{Scheme: "learned"} }), learned)
	section := func(c map[string]any, key string) map[string]any { return c[key].(map[string]any) }
	taken := filepath.Join(t.TempDir(), "taken")
	if err := os.CopyFS(taken, os.DirFS(good)); err != nil {
		t.Fatal(err)
	}
	fine := []string{"--finetune-len", "32", "--finetune-steps", "1"}
	for _, c := range []struct {
		name string
		dir  string
		edit func(c map[string]any)
		args []string
		want string
	}{
		{name: "no --out", args: []string{}, want: "the following arguments are required: --out"},
		{name: "no steps", args: []string{"--finetune-len", "32", "--finetune-steps", "0"}, want: "--finetune-steps 0: want a whole number of at least 1"},
		{name: "a scaling unknown", args: append([]string{"--scaling", "nosuch"}, fine...), want: "--scaling nosuch"},
		{name: "nothing to train", want: "is trained: give --finetune-len and --finetune-steps"},
		{name: "a fine-tune not longer", args: []string{"--finetune-len", "8", "--finetune-steps", "1"}, want: "--finetune-len 8: want a length above train.seq_len 16"},
		{name: "partial", edit: func(c map[string]any) { c["partial"] = "train step 50 of 150" }, args: fine, want: "saved at train step 50 of 150, before training finished"},
		{name: "fine-tuned already", edit: func(c map[string]any) {
			section(c, "train")["finetune"] = map[string]any{"seq_len": 32, "steps": 5, "lr": 0.001}
		}, args: fine, want: "was fine-tuned already, at 32; its config cannot record a second fine-tune"},
		{name: "learned positions past their table", dir: learned, args: fine, want: "finetune at 32: learned positions: 32 positions, but the table has 16 rows"},
		{name: "no optimizer marks", edit: func(c map[string]any) {
			for _, w := range c["weights"].([]any) {
				delete(w.(map[string]any), "decay")
			}
		}, args: fine, want: "config.json: weights: wte has no decay mark"},
		{name: "an export in --out", args: append([]string{"--out", taken}, fine...), want: "--out: " + taken + "/model.safetensors exists; use --overwrite"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := c.dir
			if dir == "" {
				dir = good
			}
			if c.edit != nil {
				dir = filepath.Join(t.TempDir(), "export")
				if err := os.CopyFS(dir, os.DirFS(good)); err != nil {
					t.Fatal(err)
				}
				editConfig(t, dir, c.edit)
			}
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{exporttest.Script("train.py"), dir, "--quiet"}, c.args...)
			if c.args == nil || len(c.args) > 0 && c.args[0] != "--out" {
				args = append(args, "--out", out)
			}
			b, err := exec.Command(exporttest.Python, args...).CombinedOutput()
			msg := strings.TrimSpace(string(b))
			exit, _ := err.(*exec.ExitError)
			if exit == nil || exit.ExitCode() != 2 || strings.Contains(msg, "\n") || !strings.Contains(msg, c.want) {
				t.Errorf("exit %v, output %q; want exit 2 and one line containing %q", err, msg, c.want)
			}
			if _, err := os.Lstat(out); err == nil {
				t.Errorf("wrote %s", out)
			}
		})
	}
}
