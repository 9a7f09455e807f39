package data

import (
	"fmt"

	"extrapolate/internal/rng"
)

// Sampler draws random training windows.
type Sampler struct {
	Tokens []byte
	Rng    rng.SplitMix64
	// Passkey is the fraction of windows replaced by passkey documents (see PasskeyDoc). At 0 the
	// generator draws exactly what it drew before passkeys existed, so such runs are unchanged.
	Passkey float64

	doc []byte
}

// NewSampler returns a sampler over tokens seeded with seed.
func NewSampler(tokens []byte, seed uint64) *Sampler {
	return &Sampler{Tokens: tokens, Rng: rng.SplitMix64{State: seed}}
}

// Generator is the sampler's random generator, whose state a checkpoint saves.
func (s *Sampler) Generator() *rng.SplitMix64 { return &s.Rng }

// Fill writes len(ids)/seqLen windows of seqLen tokens, each from a random offset, into ids,
// and the tokens that follow each into targets.
func (s *Sampler) Fill(ids, targets []int, seqLen int) error {
	limit := len(s.Tokens) - seqLen - 1
	if limit <= 0 {
		return fmt.Errorf("data: %d training tokens are too few for windows of %d", len(s.Tokens), seqLen)
	}
	for b := 0; b < len(ids)/seqLen; b++ {
		var w []byte
		if s.Passkey > 0 && s.Rng.Float64() < s.Passkey {
			if len(s.doc) != seqLen+1 {
				s.doc = make([]byte, seqLen+1)
			}
			if err := passkeyDoc(s.doc, s.Tokens, &s.Rng); err != nil {
				return err
			}
			w = s.doc
		} else {
			off := int(s.Rng.Next() % uint64(limit))
			w = s.Tokens[off : off+seqLen+1]
		}
		for t := 0; t < seqLen; t++ {
			ids[b*seqLen+t] = int(w[t])
			targets[b*seqLen+t] = int(w[t+1])
		}
	}
	return nil
}

// EvalSet is the validation text scored at every length: its first Tokens targets, cut into
// windows of the length at hand. Every length thus scores the same tokens, each predicted from
// the earlier tokens of its window only.
type EvalSet struct {
	Valid  []byte
	Tokens int
}

// NewEvalSet checks that valid holds tokens targets and returns the set.
func NewEvalSet(valid []byte, tokens int) (*EvalSet, error) {
	if tokens <= 0 {
		return nil, fmt.Errorf("eval.tokens: %d, want a positive number", tokens)
	}
	if len(valid) < tokens+1 {
		return nil, fmt.Errorf("eval.tokens: %d, but the validation text holds only %d", tokens, len(valid)-1)
	}
	return &EvalSet{Valid: valid, Tokens: tokens}, nil
}
