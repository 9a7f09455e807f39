// Package exporttest holds what the tests of cmd/export and cmd/import both need: a tiny trained
// checkpoint, its losses as cmd/eval computes them and as the PyTorch loader does, and their
// comparison; and the interpreter that runs pytorch/, which CI must have. It is imported by
// tests only.
package exporttest

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"testing"

	"extrapolate/data"
	"extrapolate/experiments/config"
	"extrapolate/experiments/evaluate"
	"extrapolate/experiments/training"
	"extrapolate/internal/cmdtest"
	"extrapolate/internal/stepcheck"
	"extrapolate/position"
)

// Python is the interpreter pytorch/ runs with: Debian's, where python3-torch installs torch.
const Python = "/usr/bin/python3"

// NeedTorch skips the test when Python cannot import torch, and fails it when the environment
// variable CI is set: CI installs python3-torch (.ci/run), so a test that needs it must not pass
// there by skipping.
func NeedTorch(t *testing.T) {
	t.Helper()
	if err := exec.Command(Python, "-c", "import torch").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and %s cannot import torch (%v): install python3-torch", Python, err)
		}
		t.Skipf("%s cannot import torch (%v): apt-get install python3-torch", Python, err)
	}
}

// Script is the path of a file of pytorch/ (load.py, train.py) in the repository.
func Script(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "pytorch", name)
}

// Tolerance bounds |loss_go − loss_torch| / loss_torch. The Go model computes in float32 (its
// weights, activations and scores; the position tables in float64, then rounded), the loader
// in float64 from the same float32 weights: each logit then differs by float32 rounding,
// 2^-24 ≈ 6e-8 relative, a few ulps after the sums of LayerNorm and softmax and the fast exp
// and tanh, and the mean over 256 tokens averages much of it away: the largest difference seen
// over every variant of cmd/export's loader test is 1.5e-7. 2e-6 leaves a margin of 13. A wrong
// formula moves these models' loss by far more: an ALiBi slope 10% off by 1e-2, YaRN without
// its attention factor by 6e-2, p-RoPE's stopped pairs turning slowly instead of not at all by
// 1.6e-4, log-n with log(L+1) for log(L) by 5e-3 (each tried in the loader, each failing that
// test).
const Tolerance = 2e-6

// TrainTiny trains a tiny model of 2 layers on a generated text, with the config as set
// changes it, and returns its checkpoint: 150 steps at a learning rate of 0.01, so that its
// attention is sharp and every position formula shows in its loss (after a dozen steps
// attention is near uniform, and YaRN's attention factor moved the loss by less than 1e-6).
func TrainTiny(t *testing.T, set func(c *config.Config)) string {
	t.Helper()
	c := TinyConfig(t)
	set(&c)
	_, ckpt := stepcheck.Protocol(t, c)
	return ckpt
}

// TinyConfig is the config TrainTiny trains, before set: width 16, 2 layers, 2 heads, at 16
// tokens, scored at 16, 32 and 64 on 256 tokens of a generated text.
func TinyConfig(t *testing.T) config.Config {
	c := config.Default()
	c.Name = "tiny"
	c.Data = data.Config{Corpus: "text", Path: cmdtest.TextCorpus(t)}
	c.Model.DModel, c.Model.Layers, c.Model.Heads = 16, 2, 2
	c.Train.SeqLen, c.Train.BatchSize, c.Train.Steps, c.Train.LR = 16, 8, 150, 1e-2
	c.Eval = config.Eval{Lengths: []int{16, 32, 64}, Tokens: 256, BatchTokens: 128}
	return c
}

// Scored is a loss by scaling and length; NaN for a length that is not applicable.
type Scored map[string]map[int]float64

// add records the loss at a scaling and length, nil for not applicable.
func (s Scored) add(scaling string, n int, loss *float64) {
	if s[scaling] == nil {
		s[scaling] = map[int]float64{}
	}
	s[scaling][n] = math.NaN()
	if loss != nil {
		s[scaling][n] = *loss
	}
}

// EvalScores scores the checkpoint under the scalings given (nil: none and the config's own)
// as cmd/eval does, at the config's lengths.
func EvalScores(t *testing.T, ckpt string, scalings []*position.Scaling) Scored {
	t.Helper()
	tr, err := training.LoadCheckpoint(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	if scalings == nil {
		scalings = []*position.Scaling{nil}
		if sc := tr.Config().Position.Scaling; sc != nil {
			scalings = append(scalings, sc)
		}
	}
	rep, err := evaluate.Scalings(context.Background(), tr, scalings, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := Scored{}
	for _, r := range rep.Results {
		for _, l := range r.Lengths {
			out.add(r.Scaling, l.Length, l.Loss)
		}
	}
	return out
}

// LoaderScores runs pytorch/load.py in float64 on exports, with its flags args (--scaling, ...),
// and reads its JSON: a report per folder, in order. --block-scores 1000 cuts a tiny model's
// queries into blocks of a few rows (batches of 2 to 8 windows on 2 heads, at 16 to 64
// positions), so that the blocks' seams are checked.
func LoaderScores(t *testing.T, folders []string, args ...string) []Scored {
	t.Helper()
	args = append([]string{Script("load.py"), "--json", "--dtype", "float64", "--block-scores", "1000", "--quiet"}, args...)
	cmd := exec.Command(Python, append(args, folders...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("load.py: %v: %s", err, stderr.String())
	}
	var reps []struct {
		Results []struct {
			Scaling string `json:"scaling"`
			Lengths []struct {
				Length int      `json:"length"`
				Loss   *float64 `json:"loss"`
			} `json:"lengths"`
		} `json:"results"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &reps); err != nil || len(reps) != len(folders) {
		t.Fatalf("load.py's output %q for %d folders: %v", stdout.String(), len(folders), err)
	}
	out := make([]Scored, len(reps))
	for i, rep := range reps {
		out[i] = Scored{}
		for _, r := range rep.Results {
			for _, l := range r.Lengths {
				out[i].add(r.Scaling, l.Length, l.Loss)
			}
		}
	}
	return out
}

// Compare checks that got has every scaling and length of want, within Tolerance, and the same
// lengths not applicable, and returns the largest relative difference.
func Compare(t *testing.T, want, got Scored) float64 {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("scored scalings %v, want %v", keys(got), keys(want))
	}
	worst := 0.0
	for sc, byLen := range want {
		for n, w := range byLen {
			g, ok := got[sc][n]
			switch {
			case !ok:
				t.Errorf("%s at %d: no result", sc, n)
			case math.IsNaN(w) || math.IsNaN(g):
				if math.IsNaN(w) != math.IsNaN(g) {
					t.Errorf("%s at %d: loss %v, want %v: one says not applicable", sc, n, g, w)
				}
			default:
				rel := math.Abs(w-g) / math.Abs(g)
				worst = math.Max(worst, rel)
				if rel > Tolerance {
					t.Errorf("%s at %d: cmd/eval loss %.7f, PyTorch %.7f (relative %.2g, tolerance %g)", sc, n, w, g, rel, Tolerance)
				}
			}
		}
	}
	return worst
}

func keys(s Scored) []string {
	var out []string
	for k := range s {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
