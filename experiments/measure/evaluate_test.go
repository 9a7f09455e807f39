package measure

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"extrapolate/data"
	"extrapolate/experiments/config"
	"extrapolate/experiments/internal/testrun"
	"extrapolate/model"
	"extrapolate/position"
)

// tinyModel is an untrained model of a tiny config and its corpus: evaluation does not need a
// trained model to be checked.
func tinyModel(t *testing.T, scheme string) (config.Config, *model.Model, *data.Corpus) {
	t.Helper()
	c := testrun.Config(t, scheme)
	m, err := newModel(testrun.Resolved(t, c))
	if err != nil {
		t.Fatal(err)
	}
	corpus, err := data.Load(c.Data)
	if err != nil {
		t.Fatal(err)
	}
	return c, m, corpus
}

// evaluateAll runs the protocol's pass with s over the windows of e, c's evaluation in place of
// its own, for the score and the per-position sums at every length.
func evaluateAll(t *testing.T, m *model.Model, s position.Scheme, corpus *data.Corpus, c config.Config, e config.Eval) ([]LengthResult, []PassLength, error) {
	t.Helper()
	c.Eval = e
	ctx := context.Background()
	ev := &Evaluation{Resolved: testrun.Resolved(t, c), Model: m, Corpus: corpus}
	var seen passSeen
	err := ev.Pass(ctx, s, &seen)
	var lengths []LengthResult
	for _, pl := range seen {
		lengths = append(lengths, pl.LengthResult)
	}
	return lengths, seen, err
}

// passSeen keeps how the pass ended at each length.
type passSeen []PassLength

func (p *passSeen) Length(int) LengthObserver                    { return p }
func (p *passSeen) Batch(*model.Graph, []data.Window, []float64) {}
func (p *passSeen) End(l PassLength)                             { *p = append(*p, l) }

// TestStrideEqualLengthIsNonOverlapping checks that eval.stride equal to the length gives
// exactly the numbers of non-overlapping windows, and that the loss by position comes from the
// same pass: its token-weighted mean is the length's loss.
func TestStrideEqualLengthIsNonOverlapping(t *testing.T) {
	c, m, corpus := tinyModel(t, "rope")
	_, s := testrun.Resolved(t, c).Schemes()
	plain, byPos, err := evaluateAll(t, m, s, corpus, c, c.Eval)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range c.Eval.Lengths {
		e := c.Eval
		e.Lengths, e.Stride = []int{n}, &n
		strided, sbyPos, err := evaluateAll(t, m, s, corpus, c, e)
		if err != nil {
			t.Fatal(err)
		}
		if *strided[0].Loss != *plain[i].Loss || strided[0].Tokens != plain[i].Tokens {
			t.Fatalf("length %d: stride %d gives loss %v over %d tokens, non-overlapping windows %v over %d",
				n, n, *strided[0].Loss, strided[0].Tokens, *plain[i].Loss, plain[i].Tokens)
		}
		for p := range sbyPos[0].Sum {
			if sbyPos[0].Sum[p] != byPos[i].Sum[p] || sbyPos[0].Count[p] != byPos[i].Count[p] {
				t.Fatalf("length %d: loss at position %d differs", n, p)
			}
		}
		var sum float64
		tokens := 0
		for p := range byPos[i].Sum {
			sum += byPos[i].Sum[p]
			tokens += byPos[i].Count[p]
		}
		if tokens != c.Eval.Tokens {
			t.Fatalf("length %d: loss by position counts %d tokens, want %d", n, tokens, c.Eval.Tokens)
		}
		// The graph's mean is rounded to float32 once per batch: agreement to float32 precision.
		if got, want := sum/float64(tokens), *plain[i].Loss; math.Abs(got-want) > 1e-6*want {
			t.Fatalf("length %d: loss by position averages %.9f, the length's loss is %.9f", n, got, want)
		}
	}
}

// TestSlidingWindowsFromDefinition recomputes a sliding-window evaluation target by target from
// the protocol's definition, each window on its own: a target i < n is predicted from the first
// window; a later one from the window that ends at the first of n+stride, n+2·stride, ... (or at
// the end of the set) past it.
func TestSlidingWindowsFromDefinition(t *testing.T) {
	c, m, corpus := tinyModel(t, "alibi")
	_, s := testrun.Resolved(t, c).Schemes()
	const n, stride, tokens = 32, 12, 224 // tokens: a multiple of n, as a config takes it
	// One window a batch: the shape of the definition's graph below, so that a BLAS whose
	// order of summation depends on the shape (OpenBLAS, with -tags openblas) gives the same bits.
	e := config.Eval{Lengths: []int{n}, Tokens: tokens, BatchTokens: n, Stride: new(int)}
	*e.Stride = stride
	got, byPos, err := evaluateAll(t, m, s, corpus, c, e)
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.Graph(s, 1, n, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	losses := make([]float64, n)
	var total float64
	count := make([]int, n)
	for i := 0; i < tokens; i++ {
		end := n
		for end < i+1 {
			end += stride
		}
		end = min(end, tokens)
		start := end - n
		for k := 0; k < n; k++ {
			g.IDs[k], g.Targets[k] = int(corpus.Valid[start+k]), int(corpus.Valid[start+k+1])
		}
		if _, err := g.Run(); err != nil {
			t.Fatal(err)
		}
		tokenLosses(g.Logits(), g.Targets, losses)
		total += losses[i-start]
		count[i-start]++
	}
	want := total / tokens
	if got[0].Tokens != tokens || math.Abs(*got[0].Loss-want) > 1e-12 {
		t.Fatalf("stride %d: loss %.15f over %d tokens, the definition gives %.15f over %d", stride, *got[0].Loss, got[0].Tokens, want, tokens)
	}
	for p := range count {
		if byPos[0].Count[p] != count[p] {
			t.Fatalf("position %d scored %d times, the definition says %d", p, byPos[0].Count[p], count[p])
		}
	}
}

// TestTokenLossesMatchGraph checks the per-token losses against the graph's own mean.
func TestTokenLossesMatchGraph(t *testing.T) {
	c, m, corpus := tinyModel(t, "rope")
	_, s := testrun.Resolved(t, c).Schemes()
	g, err := m.Graph(s, 4, 16, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for i := range g.IDs {
		g.IDs[i], g.Targets[i] = int(corpus.Valid[i]), int(corpus.Valid[i+1])
	}
	loss, err := g.Run()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, len(g.IDs))
	tokenLosses(g.Logits(), g.Targets, out)
	var sum float64
	for _, l := range out {
		if !(l > 0) {
			t.Fatalf("token loss %v", l)
		}
		sum += l
	}
	if mean := sum / float64(len(out)); math.Abs(mean-loss) > 1e-6*loss {
		t.Fatalf("per-token losses average %.9f, the graph's loss is %.9f", mean, loss)
	}
}

func TestStrideAndPasskeyConfigErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(path, []byte("name: x\n"), 0o644)
	for _, c := range []struct{ set, field string }{
		{"eval.stride=0", "eval.stride"},
		{"eval.stride=-8", "eval.stride"},
		{"eval.stride=65", "eval.stride"},
		{"eval.stride=x", "eval.stride"},
		{"train.passkey.fraction=-0.1", "train.passkey.fraction"},
		{"train.passkey.fraction=1", "train.passkey.fraction"},
		{"train.passkey.fraction=.nan", "train.passkey.fraction"},
		{"train.passkey.bogus=1", "train.passkey.bogus"},
	} {
		_, err := config.Load(path, []string{c.set})
		if err == nil || !strings.Contains(err.Error(), c.field) || strings.Contains(err.Error(), "\n") {
			t.Errorf("-set %s: %v, want one line naming %s", c.set, err, c.field)
		}
	}
	for _, set := range []string{"eval.stride=64", "eval.stride=1", "train.passkey.fraction=0", "train.passkey.fraction=0.5"} {
		if _, err := config.Load(path, []string{set}); err != nil {
			t.Errorf("-set %s: %v", set, err)
		}
	}
	// A config without the new fields marshals as before they existed: its hash, which marks
	// committed results as current, is unchanged.
	c, err := config.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b := string(c.Marshal()); strings.Contains(b, "stride") || strings.Contains(b, "passkey") {
		t.Fatalf("the resolved config mentions fields it does not set:\n%s", b)
	}
}

func TestEvalBatch(t *testing.T) {
	for _, c := range []struct{ windows, limit, want int }{
		{1024, 256, 256}, {64, 16, 16}, {12, 5, 4}, {7, 3, 1}, {5, 100, 5}, {1, 1, 1},
	} {
		if got := EvalBatch(c.windows, c.limit); got != c.want {
			t.Errorf("EvalBatch(%d, %d) = %d, want %d", c.windows, c.limit, got, c.want)
		}
	}
}

// TestEvalSetScoresSameTokens checks the protocol's core: at every length, the targets scored
// are exactly the first Tokens validation targets, each once, and each is predicted from earlier
// tokens of its own window only.
func TestEvalSetScoresSameTokens(t *testing.T) {
	valid := []byte(strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789", 60))
	set, err := data.NewEvalSet(valid, 1024)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{16, 64, 256, 1024} {
		ws, err := set.Plan(n, n)
		if err != nil {
			t.Fatal(err)
		}
		windows := len(ws)
		batch := EvalBatch(windows, 2048/n)
		if windows%batch != 0 || batch*n > 2048 {
			t.Fatalf("length %d: batch of %d windows does not divide %d or exceeds the budget", n, batch, windows)
		}
		ids, targets := make([]int, batch*n), make([]int, batch*n)
		var scored []int
		for first := 0; first < windows; first += batch {
			set.FillWindows(ids, targets, n, ws[first:first+batch])
			for i := range ids {
				w := (first + i/n) * n // start of this window in the validation text
				pos := w + i%n
				if ids[i] != int(valid[pos]) || targets[i] != int(valid[pos+1]) {
					t.Fatalf("length %d: token %d is not the validation text at %d", n, i, pos)
				}
			}
			scored = append(scored, targets...)
		}
		if len(scored) != 1024 {
			t.Fatalf("length %d scores %d tokens, want 1024", n, len(scored))
		}
		for i, tg := range scored {
			if tg != int(valid[i+1]) {
				t.Fatalf("length %d: target %d is %d, want %d", n, i, tg, valid[i+1])
			}
		}
	}
	if _, err := data.NewEvalSet(valid[:100], 1024); err == nil {
		t.Fatal("an evaluation set larger than the validation text was accepted")
	}
}
