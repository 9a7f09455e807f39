package task

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"extrapolate/internal/rng"
)

// TestQA checks that a prompt and answer make an example whose answer bytes are the answer's.
func TestQA(t *testing.T) {
	e := QA([]byte("ab="), []byte("ab."))
	if string(e.Text) != "ab=ab." || !slices.Equal(e.Answer, []bool{false, false, false, true, true, true}) {
		t.Fatalf("QA: %q %v", e.Text, e.Answer)
	}
	if got := string(e.AnswerBytes()); got != "ab." {
		t.Fatalf("AnswerBytes %q, want %q", got, "ab.")
	}
}

// TestFill checks a window against one written out by hand: the tag, the example, padding; a
// target on exactly the positions before answer bytes.
func TestFill(t *testing.T) {
	e := QA([]byte("xy="), []byte("xy."))
	ids, targets := make([]int, 12), make([]int, 12)
	if err := Fill(ids, targets, Copy{}, e); err != nil {
		t.Fatal(err)
	}
	// "copy:xy=xy." is 11 bytes: 10 inputs (the last byte is only a target), then a pad.
	wantIDs := []int{'c', 'o', 'p', 'y', ':', 'x', 'y', '=', 'x', 'y', Pad, Pad}
	wantTargets := []int{NoTarget, NoTarget, NoTarget, NoTarget, NoTarget, NoTarget, NoTarget, 'x', 'y', '.', NoTarget, NoTarget}
	if !slices.Equal(ids, wantIDs) || !slices.Equal(targets, wantTargets) {
		t.Fatalf("ids %v\nwant %v\ntargets %v\nwant    %v", ids, wantIDs, targets, wantTargets)
	}
	if err := Fill(ids[:9], targets[:9], Copy{}, e); err == nil {
		t.Fatal("an example longer than its window was written")
	}
}

// TestFillHidden checks a window of mqar, which hides its answers and has no tag, against one
// written out by hand: the pairs pN and kA, p asked at the first slot and k at the fourth.
func TestFillHidden(t *testing.T) {
	text := []byte("pNkApNsnLFkAwzVNEwNOxLcHylvAuFOa")
	e := Example{Text: text, Answer: make([]bool, len(text)), Hide: true}
	e.Answer[5], e.Answer[11] = true, true
	if n := WindowLen(MQAR{}, 2); n != 31 {
		t.Fatalf("WindowLen %d, want 31: 32 bytes, no tag, less the last", n)
	}
	ids, targets := make([]int, 31), make([]int, 31)
	if err := Fill(ids, targets, MQAR{}, e); err != nil {
		t.Fatal(err)
	}
	wantIDs := []byte("pNkAp_snLFk_wzVNEwNOxLcHylvAuFO")
	for i := range ids {
		want := NoTarget
		switch i {
		case 4:
			want = 'N'
		case 10:
			want = 'A'
		}
		if ids[i] != int(wantIDs[i]) || targets[i] != want {
			t.Fatalf("at %d: id %q, target %d; want %q, %d", i, rune(ids[i]), targets[i], wantIDs[i], want)
		}
	}
}

// TestSamplerDraws checks the training windows: deterministic from the seed, every task of a
// mixture drawn, sizes over the whole training range, and no held-out example where examples
// are plentiful (copy of 8 or more letters).
func TestSamplerDraws(t *testing.T) {
	tasks := []Task{Copy{}, Reverse{}}
	n := SeqLen(tasks)
	const batch = 400
	ids, targets := make([]int, batch*n), make([]int, batch*n)
	s := NewSampler(tasks, 7)
	if err := s.Fill(ids, targets, n); err != nil {
		t.Fatal(err)
	}
	again := NewSampler(tasks, 7)
	ids2, targets2 := make([]int, batch*n), make([]int, batch*n)
	if err := again.Fill(ids2, targets2, n); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, ids2) || !slices.Equal(targets, targets2) {
		t.Fatal("the same seed drew different windows")
	}
	counts := map[string]int{}
	sizes := map[int]bool{}
	for b := range batch {
		w := ids[b*n : (b+1)*n]
		var text []byte
		for _, id := range w {
			if id != Pad {
				text = append(text, byte(id))
			}
		}
		name, rest, ok := strings.Cut(string(text), ":")
		if !ok {
			t.Fatalf("window %d has no tag: %q", b, text)
		}
		counts[name]++
		prompt, _, _ := strings.Cut(rest, "=")
		sizes[len(prompt)] = true
		// The window's text and its last target are the example: rebuild it and ask.
		last := 0
		for i, y := range targets[b*n : (b+1)*n] {
			if y != NoTarget {
				last = i
			}
		}
		e := QA([]byte(prompt+"="), append([]byte(rest[len(prompt)+1:]), byte(targets[b*n+last])))
		if len(prompt) >= 8 && HeldOut(e) {
			t.Fatalf("window %d is the held-out example %q", b, e.Text)
		}
	}
	if counts["copy"] < batch/3 || counts["reverse"] < batch/3 {
		t.Fatalf("tasks drawn %v, want each about half of %d", counts, batch)
	}
	for size := 1; size <= 16; size++ {
		if !sizes[size] {
			t.Fatalf("size %d never drawn in %d windows", size, batch)
		}
	}
}

// TestCases checks the evaluation set: the same on every call, every example held out and of
// its size.
func TestCases(t *testing.T) {
	a, err := Cases(Copy{}, 12, 30)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Cases(Copy{}, 12, 30)
	for i := range a {
		if !bytes.Equal(a[i].Text, b[i].Text) {
			t.Fatalf("example %d differs between calls: %q, %q", i, a[i].Text, b[i].Text)
		}
		if !HeldOut(a[i]) || len(a[i].Text) != 2*12+2 {
			t.Fatalf("example %q: held out %v, %d bytes", a[i].Text, HeldOut(a[i]), len(a[i].Text))
		}
	}
}

// TestCopyAnswers checks copy's answers against the prompt's letters, at every size it is
// trained or scored at.
func TestCopyAnswers(t *testing.T) {
	g := rng.SplitMix64{State: 3}
	for size := 1; size <= 64; size++ {
		for range 20 {
			e := Copy{}.Generate(&g, size)
			prompt, _, _ := bytes.Cut(e.Text, []byte("="))
			if len(prompt) != size || string(e.AnswerBytes()) != string(prompt)+"." {
				t.Fatalf("size %d: %q answers %q", size, e.Text, e.AnswerBytes())
			}
			if err := e.check(Copy{}, size); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestConfigResolve checks the task section's errors, each naming its field.
func TestConfigResolve(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "task.names: no task"},
		{Config{Names: []string{"copy", "copy"}}, "task.names: copy given twice"},
		{Config{Names: []string{"cpy"}}, `task.names: unknown task "cpy"`},
		{Config{Names: []string{"copy"}, Examples: -1}, "task.examples: -1"},
		{Config{Names: []string{"copy"}, Examples: maxExamples + 1}, "task.examples"},
	} {
		_, _, err := c.cfg.Resolve()
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
	tasks, ex, err := Config{Names: []string{"copy"}}.Resolve()
	if err != nil || len(tasks) != 1 || tasks[0].Name() != "copy" || ex != DefaultExamples {
		t.Fatalf("%v %d %v", tasks, ex, err)
	}
}

// TestBuiltinsWellFormed checks every registered task: its examples fit MaxLen at every
// training and test size, and each test size has held-out examples.
func TestBuiltinsWellFormed(t *testing.T) {
	for _, name := range Names() {
		tk, _ := Lookup(name)
		s := tk.Sizes()
		g := rng.SplitMix64{State: 11}
		for size := s.Min; size <= s.Max; size++ {
			for range 10 {
				if err := tk.Generate(&g, size).check(tk, size); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, size := range s.Test {
			if _, err := Cases(tk, size, 5); err != nil {
				t.Fatal(err)
			}
		}
		if tk.Source() == "" {
			t.Errorf("task %s names no source", name)
		}
	}
}

// TestHeldOutShare checks that about one example in heldOutEvery is held out, for every
// registered task at a size in its training range and at its largest test size: a hash whose
// low bits follow the text's bytes (FNV-1a's parity of odd bytes) would hold out none of some
// tasks' examples and a fifth of others'.
func TestHeldOutShare(t *testing.T) {
	const draws = 4000
	for _, name := range Names() {
		tk, _ := Lookup(name)
		s := tk.Sizes()
		for _, size := range []int{s.Max, s.Test[len(s.Test)-1]} {
			g := rng.SplitMix64{State: 5}
			held := 0
			for range draws {
				if HeldOut(tk.Generate(&g, size)) {
					held++
				}
			}
			// 10% of 4000 is 400 with a standard deviation of 19; 300 and 500 are 5 away.
			if held < 300 || held > 500 {
				t.Errorf("%s at size %d: %d of %d held out, want about %d", name, size, held, draws, draws/heldOutEvery)
			}
		}
	}
}
