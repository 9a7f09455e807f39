package training

import (
	"context"
	"path/filepath"
	"testing"

	"extrapolate/experiments/internal/testrun"
	"extrapolate/experiments/measure"
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

// TestScalingFromOutside evaluates a trained model under a scaling registered outside package
// position: it leaves the training length alone (factor auto is 1 there) and changes the scores
// past it, and its own field is checked by name.
func TestScalingFromOutside(t *testing.T) {
	c := testrun.Config(t, "rope")
	r := &Run{Resolved: testrun.Resolved(t, c), Dir: filepath.Join(t.TempDir(), "run")}
	if _, err := r.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	trained, err := LoadCheckpoint(filepath.Join(r.Dir, measure.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	sc := &position.Scaling{Type: "test_stretch", Factor: position.Factor{Auto: true}, Params: map[string]any{"power": 2}}
	rep, err := EvaluateScalings(context.Background(), trained, []*position.Scaling{nil, sc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	none, stretched := rep.Results[0].Lengths, rep.Results[1].Lengths
	if *none[0].Loss != *stretched[0].Loss {
		t.Errorf("at the training length: %v unscaled, %v scaled; want the same", *none[0].Loss, *stretched[0].Loss)
	}
	if *none[2].Loss == *stretched[2].Loss {
		t.Errorf("at 4x: the scaling changed nothing")
	}
	c.Position.Scaling = &position.Scaling{Type: "test_stretch", Factor: position.Factor{Value: 2}, Params: map[string]any{"powers": 2}}
	if _, err := position.New(c.Spec(c.Position)); err == nil || err.Error()[:len("position.scaling.powers")] != "position.scaling.powers" {
		t.Fatalf("an unknown field of the scaling: %v", err)
	}
}
