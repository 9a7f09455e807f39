package tasks

import (
	"context"
	"math"
	"testing"

	"gorgonia.org/tensor"

	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
	"extrapolate/model"
	"extrapolate/position"
	"extrapolate/task"
)

// tinyModel is an untrained model: what exact match means does not need a trained one.
func tinyModel(t *testing.T) (*model.Model, position.Scheme) {
	t.Helper()
	s, err := position.New(position.Spec{Config: position.Config{Scheme: "rope"}, Heads: 2, DModel: 16, Layers: 1, TrainLen: 16})
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.New(model.Config{Vocab: 256, DModel: 16, Layers: 1, Heads: 2, TrainLen: 16}, s, tensor.Float64, 3)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}

// greedy writes, after the tag and the example's text up to its first answer byte, as many
// bytes as the answer has, each the model's most likely next token given what it has written:
// greedy decoding, one forward pass a byte.
func greedy(t *testing.T, m *model.Model, s position.Scheme, tk task.Task, e task.Example) []byte {
	t.Helper()
	first := 0
	for !e.Answer[first] {
		first++
	}
	text := append(task.Tag(tk), e.Text[:first]...)
	var out []byte
	for range len(e.AnswerBytes()) {
		g, err := m.Graph(s, 1, len(text), model.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i, b := range text {
			g.IDs[i], g.Targets[i] = int(b), 0
		}
		if _, err := g.Run(); err != nil {
			t.Fatal(err)
		}
		next := byte(model.Argmax(g.Logits(), len(text)-1))
		g.Close()
		out, text = append(out, next), append(text, next)
	}
	return out
}

// TestExactMatchIsGreedy checks that exact match under teacher forcing is greedy decoding's:
// an example whose answer is what greedy decoding writes scores exact, and the same example
// with any one answer byte changed does not. The answers are contiguous, as in copy, so that
// greedy decoding of the whole answer is defined.
func TestExactMatchIsGreedy(t *testing.T) {
	m, s := tinyModel(t)
	tk := task.Copy{}
	for size := 1; size <= 6; size++ {
		cases, err := task.Cases(tk, size, 1)
		if err != nil {
			t.Fatal(err)
		}
		ex := cases[0]
		prompt := ex.Text[:size+1]
		answer := greedy(t, m, s, tk, ex)
		right := task.QA(prompt, answer)
		c, err := scoreSize(context.Background(), m, s, nil, tk, size, []task.Example{right}, 1<<12)
		if err != nil {
			t.Fatal(err)
		}
		if c.Exact != 1 || c.TokensRight != len(answer) {
			t.Fatalf("size %d: the greedy answer %q scored %d exact, %d of %d bytes right", size, answer, c.Exact, c.TokensRight, len(answer))
		}
		for i := range answer {
			wrong := append([]byte{}, answer...)
			wrong[i] ^= 1
			c, err := scoreSize(context.Background(), m, s, nil, tk, size, []task.Example{task.QA(prompt, wrong)}, 1<<12)
			if err != nil {
				t.Fatal(err)
			}
			if c.Exact != 0 {
				t.Fatalf("size %d: %q, the greedy answer %q with byte %d changed, scored exact", size, wrong, answer, i)
			}
		}
	}
}

// TestScoreBatches checks that a size's score does not depend on how its examples are batched,
// including a last batch filled with repeats.
func TestScoreBatches(t *testing.T) {
	m, s := tinyModel(t)
	tk := task.Copy{}
	cases, err := task.Cases(tk, 5, 7)
	if err != nil {
		t.Fatal(err)
	}
	n := task.WindowLen(tk, 5)
	one, err := scoreSize(context.Background(), m, s, nil, tk, 5, cases, n)
	if err != nil {
		t.Fatal(err)
	}
	three, err := scoreSize(context.Background(), m, s, nil, tk, 5, cases, 3*n)
	if err != nil {
		t.Fatal(err)
	}
	if one != three {
		t.Fatalf("batches of 1: %+v\nbatches of 3: %+v", one, three)
	}
	if one.Tokens != 7*6 { // five letters and '.' an example
		t.Fatalf("%d answer bytes scored, want %d", one.Tokens, 7*6)
	}
}

// windowIDs are the window ids of a run trained at windows of n tokens with randomized
// positions drawn from [0, r).
func windowIDs(t *testing.T, n, r int) *measure.WindowIDs {
	t.Helper()
	c := config.Config{Seed: 1, Train: config.Train{SeqLen: n,
		Positions: &position.IDsConfig{Type: "randomized", Params: map[string]any{"noise_max_length": r}}}}
	ids, err := c.Train.Positions.Resolve(c.Train.SeqLen)
	w := measure.NewWindowIDs(ids, c.Seed)
	if err != nil || w == nil {
		t.Fatalf("window ids %v: %v", w, err)
	}
	return w
}

// TestScoreAtIDs checks task examples scored at window ids: with a range as long as the window
// the only draw is 0..n−1, and the cell is the one without ids; from a longer range each example
// is drawn on its own, so the cell does not depend on the batches; from a shorter one the size
// is not applicable.
func TestScoreAtIDs(t *testing.T) {
	m, s := tinyModel(t)
	tk := task.Copy{}
	cases, err := task.Cases(tk, 5, 7)
	if err != nil {
		t.Fatal(err)
	}
	n := task.WindowLen(tk, 5)
	ctx := context.Background()
	score := func(ids *measure.WindowIDs, batchTokens int) Cell {
		c, err := scoreSize(ctx, m, s, ids, tk, 5, cases, batchTokens)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	plain := score(nil, 3*n)
	if at := score(windowIDs(t, n, n), 3*n); at != plain {
		t.Fatalf("at ids 0..n−1: %+v\nwithout ids: %+v", at, plain)
	}
	far := windowIDs(t, n, 8*n)
	if one, three := score(far, n), score(far, 3*n); one != three {
		t.Fatalf("at drawn ids, batches of 1: %+v\nbatches of 3: %+v", one, three)
	}
	if short := score(windowIDs(t, n-1, n-1), 3*n); short.Applicable {
		t.Fatalf("a window of %d from %d positions: %+v, want not applicable", n, n-1, short)
	}
}

// TestWilson checks the interval against values computed from Wilson's formula by hand
// (z = 1.96, in Python): 0 of 10, 5 of 10, 10 of 10 and 81 of 100.
func TestWilson(t *testing.T) {
	for _, c := range []struct {
		k, n      int
		low, high float64
	}{
		{0, 10, 0, 0.27753},
		{5, 10, 0.23659, 0.76341},
		{10, 10, 0.72247, 1},
		{81, 100, 0.72221, 0.87485},
	} {
		low, high := Wilson(c.k, c.n)
		if math.Abs(low-c.low) > 5e-5 || math.Abs(high-c.high) > 5e-5 {
			t.Errorf("Wilson(%d, %d) = [%.5f, %.5f], want [%.5f, %.5f]", c.k, c.n, low, high, c.low, c.high)
		}
	}
}
