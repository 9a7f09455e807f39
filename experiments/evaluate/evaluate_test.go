package evaluate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"extrapolate/experiments/config"
	"extrapolate/experiments/internal/testrun"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/training"
	"extrapolate/position"
)

// stretchParams is the field of a scaling registered by a test, outside package position.
type stretchParams struct {
	Power float64 `yaml:"power"`
}

func init() {
	// Divide every frequency by s^power: position interpolation with an exponent.
	position.RegisterScaling("test_stretch", position.ScalingType{
		Doc:    "a test's own scaling",
		Params: func() any { return &stretchParams{Power: 1} },
		Frequencies: func(p any, d int, b float64, _, _ int, s float64) ([]float64, float64) {
			r, _ := position.New(position.Spec{DModel: d, Heads: 1, TrainLen: 1, Config: position.Config{Scheme: "rope"}.With("base", b)})
			f, _ := r.(*position.RoPE).Frequencies(1)
			for i := range f {
				for k := 0.0; k < p.(*stretchParams).Power; k++ {
					f[i] /= s
				}
			}
			return f, 1
		},
	})
}

// trained trains the tiny run of c and loads its checkpoint: the model, and the run's results.
func trained(t *testing.T, c config.Config) (*training.Trained, *measure.Result) {
	t.Helper()
	r := &training.Run{Resolved: testrun.Resolved(t, c), Dir: filepath.Join(t.TempDir(), "run")}
	res, err := r.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tr, err := training.LoadCheckpoint(filepath.Join(r.Dir, measure.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	return tr, res
}

// sameAsRun fails unless the result of "none" scores every length as the run did.
func sameAsRun(t *testing.T, none Result, res *measure.Result) {
	t.Helper()
	for i, l := range none.Lengths {
		if *l.Loss != *res.Lengths[i].Loss {
			t.Errorf("none at %d: %v, the run said %v", l.Length, *l.Loss, *res.Lengths[i].Loss)
		}
	}
}

// TestScalingsOnOneCheckpoint evaluates one checkpoint under plain RoPE, a built-in scaling and
// one registered outside package position: "none" must reproduce the run's own numbers, and
// each scaling must leave the training length alone (factor auto is 1 there) and change the
// scores past it. The report writes its files.
func TestScalingsOnOneCheckpoint(t *testing.T) {
	tr, res := trained(t, testrun.Config(t, "rope"))
	auto := position.Factor{Auto: true}
	stretch := &position.Scaling{Type: "test_stretch", Factor: auto, Params: map[string]any{"power": 2}}
	rep, err := Scalings(context.Background(), tr, []*position.Scaling{nil, {Type: "yarn", Factor: auto}, stretch}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameAsRun(t, rep.Results[0], res)
	none := rep.Results[0].Lengths
	for _, r := range rep.Results[1:] {
		if a, b := *r.Lengths[0].Loss, *none[0].Loss; a != b {
			t.Errorf("%s at the training length: %v, plain %v; want the same", r.Scaling, a, b)
		}
		if a, b := *r.Lengths[2].Loss, *none[2].Loss; a == b {
			t.Errorf("%s at 4x equals plain RoPE: the scaling was not applied", r.Scaling)
		}
	}
	dir := t.TempDir()
	if err := rep.Write(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{ScalingsCSV, ScalingsJSON, ScalingsPNG, ScalingsSVG} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}

// TestScalingFieldChecked: a field that a scaling registered outside package position does not
// have is refused, by name.
func TestScalingFieldChecked(t *testing.T) {
	c := testrun.Config(t, "rope")
	c.Position.Scaling = &position.Scaling{Type: "test_stretch", Factor: position.Factor{Value: 2}, Params: map[string]any{"powers": 2}}
	if _, err := position.New(c.Spec(c.Position)); err == nil || !strings.HasPrefix(err.Error(), "position.scaling.powers") {
		t.Fatalf("an unknown field of the scaling: %v", err)
	}
}

// TestDroPEWithoutPositions: "none" on the checkpoint of a run that dropped RoPE for its last
// steps (train.drope) evaluates without positions, as the run did.
func TestDroPEWithoutPositions(t *testing.T) {
	c := testrun.Config(t, "rope")
	c.Train.DroPE = &config.DroPE{Fraction: 0.25}
	if err := c.Complete(); err != nil {
		t.Fatal(err)
	}
	tr, res := trained(t, c)
	if res.EvaluatedWith != "nope" {
		t.Fatalf("the run evaluated with %q, want nope", res.EvaluatedWith)
	}
	rep, err := Scalings(context.Background(), tr, []*position.Scaling{nil}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameAsRun(t, rep.Results[0], res)
}
