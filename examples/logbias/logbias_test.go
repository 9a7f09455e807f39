package logbias_test

import (
	"strings"
	"testing"

	"extrapolate/data"
	_ "extrapolate/examples/logbias"
	"extrapolate/experiments/config"
	"extrapolate/internal/cmdtest"
	"extrapolate/internal/stepcheck"
	"extrapolate/position"
)

// TestTrainsAndEvaluates trains a tiny model with a scheme registered from this package, not
// from package position, evaluates it past the training length, and checks that its weight was
// saved and trained.
func TestTrainsAndEvaluates(t *testing.T) {
	pc := position.Config{Scheme: "logbias", Params: map[string]any{"slope": 0.5}}
	slopes := stepcheck.Train(t, pc)
	if len(slopes) != 1 || len(slopes[0]) != 2 {
		t.Fatalf("the checkpoint holds scheme weights %v, want one slope per head", slopes)
	}
	for h, a := range slopes[0] {
		if a == 0.5 {
			t.Errorf("head %d: the slope is still its initial 0.5: not trained", h)
		}
	}
	c := config.Default()
	c.Name = "logbias"
	c.Data = data.Config{Corpus: "text", Path: cmdtest.TextCorpus(t)}
	c.Position = pc
	// A field the scheme does not declare is an error naming it.
	c.Position = c.Position.With("slopes", 1)
	if err := c.Complete(); err == nil || !strings.Contains(err.Error(), "position.slopes") {
		t.Fatalf("unknown field: %v", err)
	}
}
