package measure

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"extrapolate/data"
	"extrapolate/experiments/config"
	"extrapolate/experiments/internal/testrun"
	"extrapolate/model"
	"extrapolate/model/nn"
	"extrapolate/position"
)

// withIDs is c with train.positions read from src.
func withIDs(t *testing.T, c config.Config, src string) config.Config {
	t.Helper()
	var tr config.Train
	if err := yaml.Unmarshal([]byte("positions: "+src), &tr); err != nil {
		t.Fatal(err)
	}
	c.Train.Positions = tr.Positions
	return c
}

// windowIDs returns the window ids of c, failing the test on an error.
func windowIDs(t *testing.T, c config.Config) *WindowIDs {
	t.Helper()
	ids, err := c.Train.Positions.Resolve(c.Train.SeqLen)
	if err != nil {
		t.Fatal(err)
	}
	return NewWindowIDs(ids, c.Seed)
}

// drawn returns the ids Draw writes for the window kind and key, in a graph of batch windows of
// n tokens, at sequence b.
func drawn(t *testing.T, w *WindowIDs, m *model.Model, s position.Scheme, batch, b, n int, kind string, key ...int) []int {
	t.Helper()
	g, err := w.Graph(m, s, batch, n, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	w.Draw(g, b, kind, key...)
	return slices.Clone(g.Positions[b*n : (b+1)*n])
}

// TestWindowIDsDraw checks the draw of an evaluation window's ids: strictly increasing and
// below the range; the same for the same window whatever its place in a batch, and for a
// longer range or another seed, window or kind of window, another draw. PoSE's ids and a run
// without train.positions draw none.
func TestWindowIDsDraw(t *testing.T) {
	c, m, _ := tinyModel(t, "rope")
	_, s := testrunSchemes(t, c)
	if w := windowIDs(t, c); w != nil {
		t.Fatalf("window ids %+v without train.positions", w)
	}
	if w := windowIDs(t, withIDs(t, c, "{type: pose, scaled_max_position_embeddings: 64}")); w != nil {
		t.Fatalf("window ids %+v for PoSE, which evaluates at 0..n−1", w)
	}
	const L, n = 64, 16
	w := windowIDs(t, withIDs(t, c, "{type: randomized, noise_max_length: 64}"))
	ids := drawn(t, w, m, s, 3, 0, n, "text", n, 32)
	for i, p := range ids {
		if p < 0 || p >= L || i > 0 && p <= ids[i-1] {
			t.Fatalf("ids %v: want strictly increasing in [0, %d)", ids, L)
		}
	}
	if ids[n-1] == n-1 {
		t.Fatalf("ids %v: 0..n−1", ids)
	}
	if again := drawn(t, w, m, s, 1, 0, n, "text", n, 32); !slices.Equal(again, ids) {
		t.Fatalf("the same window drawn %v, then %v in another batch", ids, again)
	}
	if later := drawn(t, w, m, s, 3, 2, n, "text", n, 32); !slices.Equal(later, ids) {
		t.Fatalf("the same window drawn %v first in its batch, %v last", ids, later)
	}
	other := withIDs(t, c, "{type: randomized, noise_max_length: 64}")
	other.Seed++
	for name, got := range map[string][]int{
		"another window":         drawn(t, w, m, s, 1, 0, n, "text", n, 48),
		"another kind of window": drawn(t, w, m, s, 1, 0, n, "passkey", n, 32),
		"another seed":           drawn(t, windowIDs(t, other), m, s, 1, 0, n, "text", n, 32),
	} {
		if slices.Equal(got, ids) {
			t.Errorf("%s drew the same ids %v", name, ids)
		}
	}
	var none *WindowIDs
	g, err := none.Graph(m, s, 2, n, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	none.Draw(g, 1, "text", n, 32)
	if g.Positions != nil {
		t.Fatalf("a nil WindowIDs built a graph at ids %v", g.Positions)
	}
}

// TestWindowIDsNotApplicable checks that a window longer than the range the ids are drawn from
// is not applicable, naming the field that sets the range, and that one as long is not.
func TestWindowIDsNotApplicable(t *testing.T) {
	c, m, _ := tinyModel(t, "rope")
	_, s := testrunSchemes(t, c)
	w := windowIDs(t, withIDs(t, c, "{type: randomized, noise_max_length: 20}"))
	_, err := w.Graph(m, s, 1, 21, model.Options{})
	if !model.IsNotApplicable(err) || !strings.Contains(err.Error(), "train.positions.noise_max_length") {
		t.Fatalf("a window of 21 from 20 positions: %v, want not applicable naming the field", err)
	}
	g, err := w.Graph(m, s, 1, 20, model.Options{})
	if err != nil {
		t.Fatalf("a window of 20 from 20 positions: %v", err)
	}
	g.Close()
}

// idsSeen keeps, by window start, the ids each window of the pass was seen at, and how each
// length ended.
type idsSeen struct {
	ids     map[int][]int
	lengths []PassLength
}

func (s *idsSeen) Length(int) LengthObserver { return s }
func (s *idsSeen) Batch(g *model.Graph, ws []data.Window, _ []float64) {
	n := g.Len
	if g.Positions == nil {
		return
	}
	for b, w := range ws {
		s.ids[w.Start] = slices.Clone(g.Positions[b*n : (b+1)*n])
	}
}
func (s *idsSeen) End(l PassLength) { s.lengths = append(s.lengths, l) }

// pass runs the protocol's pass of c's evaluation over the model, at the window ids of c.
func pass(t *testing.T, c config.Config, m *model.Model, s position.Scheme, corpus *data.Corpus) *idsSeen {
	t.Helper()
	seen := &idsSeen{ids: map[int][]int{}}
	ev := &Evaluation{Resolved: testrun.Resolved(t, c), Model: m, Corpus: corpus}
	if err := ev.Pass(context.Background(), s, seen); err != nil {
		t.Fatal(err)
	}
	return seen
}

// TestPassAtDefaultIDs is the golden test of evaluation at ids: with a range as long as the
// training window, the only draw is 0..n−1, and the pass takes the ids' path in every op; it
// scores the training length as the pass without ids does, to the bit, loss by position too,
// for a rotation, biases by distance, a bias per query and the tables. A longer length is not
// applicable, naming the field.
func TestPassAtDefaultIDs(t *testing.T) {
	for _, scheme := range []string{"rope", "alibi", "t5", "kerple", "fire", "learned", "sinusoidal", "nope"} {
		t.Run(scheme, func(t *testing.T) {
			c, m, corpus := tinyModel(t, scheme)
			_, s := testrunSchemes(t, c)
			c.Eval.Lengths = []int{c.Train.SeqLen, 2 * c.Train.SeqLen}
			plain := pass(t, c, m, s, corpus)
			at := pass(t, withIDs(t, c, "{type: randomized, noise_max_length: 16}"), m, s, corpus)
			if len(at.ids) == 0 || at.ids[0][c.Train.SeqLen-1] != c.Train.SeqLen-1 {
				t.Fatalf("windows seen at %v, want 0..n−1", at.ids)
			}
			a, b := plain.lengths[0], at.lengths[0]
			if math.Float64bits(*a.Loss) != math.Float64bits(*b.Loss) || !slices.Equal(a.Sum, b.Sum) {
				t.Fatalf("loss %.9g at ids 0..n−1, %.9g without ids (or the loss by position differs)", *b.Loss, *a.Loss)
			}
			if long := at.lengths[1]; long.Applicable || !strings.Contains(long.Reason, "noise_max_length") {
				t.Fatalf("length %d from 16 positions: %+v, want not applicable naming the field", long.Length, long.LengthResult)
			}
			if !plain.lengths[1].Applicable && scheme != "learned" { // its table has 16 rows
				t.Fatalf("length %d without ids: %+v", plain.lengths[1].Length, plain.lengths[1].LengthResult)
			}
		})
	}
}

// TestPassDrawsEachWindow checks the pass at ids drawn from a longer range: every window is
// seen at ids of its own, none at 0..n−1, and the same ones, with the same loss by position,
// whatever the batches the windows are cut into (eval.batch_tokens); and the ids act.
func TestPassDrawsEachWindow(t *testing.T) {
	c, m, corpus := tinyModel(t, "rope")
	_, s := testrunSchemes(t, c)
	const n = 16
	c.Eval.Lengths = []int{n}
	at := withIDs(t, c, "{type: randomized, noise_max_length: 256}")
	whole := pass(t, at, m, s, corpus)
	distinct := map[int]bool{}
	for start, ids := range whole.ids {
		if ids[n-1] == n-1 {
			t.Fatalf("window %d seen at 0..n−1", start)
		}
		distinct[ids[n-1]] = true
	}
	if len(whole.ids) != c.Eval.Tokens/n || len(distinct) < len(whole.ids)/2 {
		t.Fatalf("%d windows seen, %d distinct last ids: want %d windows at draws of their own", len(whole.ids), len(distinct), c.Eval.Tokens/n)
	}
	small := at
	small.Eval.BatchTokens = n
	one := pass(t, small, m, s, corpus)
	for start, ids := range whole.ids {
		if !slices.Equal(one.ids[start], ids) {
			t.Fatalf("window %d seen at %v in batches of %d windows, %v one at a time", start, ids, c.Eval.BatchTokens/n, one.ids[start])
		}
	}
	// Each target's loss does not depend on the batch with package gemm's kernel (its
	// products' elements are summed in the same order whatever the shape); the sums by
	// position add them in window order either way.
	if nn.BLAS == "go-asm" && !slices.Equal(one.lengths[0].Sum, whole.lengths[0].Sum) {
		t.Fatal("the loss by position depends on the batches")
	}
	if plain := pass(t, c, m, s, corpus); *plain.lengths[0].Loss == *whole.lengths[0].Loss {
		t.Fatalf("loss %v at drawn ids, as at 0..n−1", *plain.lengths[0].Loss)
	}
}

// testrunSchemes resolves c for its schemes.
func testrunSchemes(t *testing.T, c config.Config) (train, eval position.Scheme) {
	t.Helper()
	r, err := c.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	return r.Schemes()
}
