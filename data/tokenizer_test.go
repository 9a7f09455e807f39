package data

import "fmt"

// Bytes is the byte-level tokenizer stated as one: token t is byte t, so any file can be read
// and no token is unknown. The corpus and the batches use bytes as tokens directly; this type is
// what FuzzTokenizer checks that mapping with.
type Bytes struct{}

// Vocab is the number of tokens.
func (Bytes) Vocab() int { return Vocab }

// Encode turns text into tokens.
func (Bytes) Encode(text []byte) []int {
	ids := make([]int, len(text))
	for i, b := range text {
		ids[i] = int(b)
	}
	return ids
}

// Decode turns tokens back into text; a token outside the vocabulary is an error.
func (Bytes) Decode(ids []int) ([]byte, error) {
	out := make([]byte, len(ids))
	for i, id := range ids {
		if id < 0 || id >= Vocab {
			return nil, fmt.Errorf("data: token %d at %d is outside the byte vocabulary", id, i)
		}
		out[i] = byte(id)
	}
	return out, nil
}
