package task

import (
	"fmt"
	"hash/fnv"

	"extrapolate/internal/rng"
)

// NoTarget is the target of a position that carries no loss: the model's cross-entropy leaves
// out every negative target, so only answer bytes are trained on and scored.
const NoTarget = -1

// Pad fills a window after its example. A causal model's predictions at the example's
// positions never see it, and no target is put on it.
const Pad = 0

// Blank is the byte a window reads in place of a hidden answer byte (Example.Hide).
const Blank = '_'

// A Tagger is a task that chooses the bytes its windows start with, or none: a task that follows
// a paper whose sequences carry no mark (Zoology's MQAR) says so here.
type Tagger interface {
	Tag() []byte
}

// Tag is the bytes a window starts with before its example: the task's own if it is a Tagger,
// else its name and a colon, so that a model trained on several tasks knows which one it is
// asked, and every window, even of a model without positions, starts with a mark.
func Tag(t Task) []byte {
	if tg, ok := t.(Tagger); ok {
		return tg.Tag()
	}
	return []byte(t.Name() + ":")
}

// WindowLen is the window an example of the size needs: its tag and text, less the last byte,
// which is only ever a target.
func WindowLen(t Task, size int) int { return len(Tag(t)) + t.MaxLen(size) - 1 }

// Fill writes the example of task t into one window of ids and targets, of len(ids) tokens:
// the tag and the example's bytes as inputs (Blank in place of each answer byte if the example
// hides them), then Pad; each answer byte as the target of the position before it, and NoTarget
// everywhere else.
func Fill(ids, targets []int, t Task, e Example) error {
	tag := Tag(t)
	n := len(tag) + len(e.Text) - 1
	if n > len(ids) || len(ids) != len(targets) {
		return fmt.Errorf("task %s: an example of %d bytes does not fit a window of %d tokens", t.Name(), len(e.Text), len(ids))
	}
	at := func(i int) byte { // the window's i-th byte
		if i < len(tag) {
			return tag[i]
		}
		return e.Text[i-len(tag)]
	}
	for i := range ids {
		ids[i], targets[i] = Pad, NoTarget
		if i < n {
			ids[i] = int(at(i))
			if j := i - len(tag); e.Hide && j >= 0 && e.Answer[j] {
				ids[i] = Blank
			}
			if j := i + 1 - len(tag); j >= 0 && e.Answer[j] {
				targets[i] = int(e.Text[j])
			}
		}
	}
	return nil
}

// heldOutEvery holds out one example in this many from training, by a hash of its text.
const heldOutEvery = 10

// HeldOut reports whether an example is kept for evaluation: training never draws one, so a
// model that answers held-out examples at the training sizes computes rather than remembers
// them. A size with few distinct examples (parity of 3 bits) cannot be split so; there training
// takes a held-out example after trainTries draws, and evaluation scores those it has.
func HeldOut(e Example) bool {
	h := fnv.New64a()
	h.Write(e.Text)
	// FNV-1a's low bits follow the parity of the count of odd bytes, so the sum is mixed
	// before it is reduced: unmixed, an example of each byte twice (MQAR's) is never held out.
	mixed := rng.SplitMix64{State: h.Sum64()}
	return mixed.Next()%heldOutEvery == 0
}

// trainTries bounds the draws training makes to find an example that is not held out.
const trainTries = 64

// Sampler draws training windows: each an example of one of Tasks, chosen uniformly, at a size
// uniform in that task's training range, never a held-out one (but see HeldOut).
type Sampler struct {
	Tasks []Task
	Rng   rng.SplitMix64
}

// NewSampler returns a sampler over tasks seeded with seed.
func NewSampler(tasks []Task, seed uint64) *Sampler {
	return &Sampler{Tasks: tasks, Rng: rng.SplitMix64{State: seed}}
}

// Generator is the sampler's random generator, whose state a checkpoint saves.
func (s *Sampler) Generator() *rng.SplitMix64 { return &s.Rng }

// SeqLen is the window a sampler's examples need: the longest over its tasks at the top of
// their training ranges.
func SeqLen(tasks []Task) int {
	n := 0
	for _, t := range tasks {
		n = max(n, WindowLen(t, t.Sizes().Max))
	}
	return n
}

// Fill writes len(ids)/seqLen windows of seqLen tokens into ids and targets (see Fill).
func (s *Sampler) Fill(ids, targets []int, seqLen int) error {
	if len(s.Tasks) == 0 {
		return fmt.Errorf("task: a sampler with no task")
	}
	for b := 0; b < len(ids)/seqLen; b++ {
		t := s.Tasks[s.Rng.Next()%uint64(len(s.Tasks))]
		sz := t.Sizes()
		size := sz.Min + int(s.Rng.Next()%uint64(sz.Max-sz.Min+1))
		var e Example
		for try := 0; try < trainTries; try++ {
			if e = t.Generate(&s.Rng, size); !HeldOut(e) {
				break
			}
		}
		if err := e.check(t, size); err != nil {
			return err
		}
		if err := Fill(ids[b*seqLen:(b+1)*seqLen], targets[b*seqLen:(b+1)*seqLen], t, e); err != nil {
			return err
		}
	}
	return nil
}

// evalSeed fixes the evaluation examples: every run, scheme and seed is scored on the same ones.
const evalSeed = 0x7a5c_e7a1

// evalTries bounds the draws per example evaluation makes to find held-out ones.
const evalTries = 1000

// Cases returns n held-out examples of task t at the size, the same on every call with the same
// arguments: the evaluation set. At a size with few distinct examples, an example may be drawn
// more than once; a size of which evalTries draws find none held out is an error.
func Cases(t Task, size, n int) ([]Example, error) {
	h := fnv.New64a()
	h.Write([]byte(t.Name()))
	g := rng.SplitMix64{State: evalSeed ^ h.Sum64() ^ uint64(size)<<32}
	var out []Example
	for len(out) < n {
		found := false
		for try := 0; try < evalTries; try++ {
			e := t.Generate(&g, size)
			if HeldOut(e) {
				if err := e.check(t, size); err != nil {
					return nil, err
				}
				out, found = append(out, e), true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("task %s: no held-out example of size %d in %d draws", t.Name(), size, evalTries)
		}
	}
	return out, nil
}
