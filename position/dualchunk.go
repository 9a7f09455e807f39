package position

import "fmt"

// DualChunk is Dual Chunk Attention (An et al. 2024, "Training-Free Long-Context Scaling of Large
// Language Models", ICML; reference code HKUNLP/ChunkLlama, chunkllama_attn_replace.py), which
// keeps every relative position below the training length by cutting the sequence into chunks
// of c = chunk_size − local_window keys, each key rotated at its place in its chunk, j mod c, and
// scoring each query three ways:
//
//   - intra-chunk, the keys of its own chunk, with the query at i mod c: the true distance;
//   - successive-chunk, the keys of the chunk before, with the query at min(i mod c + c,
//     chunk_size) (the reference's qc_t): the true distance while i mod c ≤ local_window, the
//     query at chunk_size past it;
//   - inter-chunk, every earlier key, with the query at qc_t[c − 1] = min(2c − 1, chunk_size).
//
// The reference merges the three attentions by their log-sum-exps, which is one softmax over
// every key: nothing is masked. A successive-chunk position is clamped only when i mod c >
// local_window, which needs c − 1 > local_window, and then 2c − 1 > chunk_size: both positions
// are chunk_size. So one alternate query position, AltQuery(i) = min(2c − 1, chunk_size), serves
// both, and
// AltKey(j) = j mod c: the keys before the previous chunk are Alt, and those of the previous
// chunk too once i mod c > local_window; the rest keep their own distance.
//
// chunk_size defaults to ⌊3L/4⌋ and local_window to ⌊L/16⌋, L the training length:
// replace_with_chunkllama's chunk_size = pretraining_length * 3 // 4 and local_window =
// pretraining_length // 16. The reference's scaling_factor (positions divided by it, 1 by
// default) is a RoPE scaling here, not part of the map.
type DualChunk struct {
	ChunkSize   int `yaml:"chunk_size"`
	LocalWindow int `yaml:"local_window"`
}

func init() { RegisterDistanceMap("dual_chunk", newDualChunk) }

func newDualChunk(s DistanceMapSpec) (DistanceMap, error) {
	p := DualChunk{ChunkSize: max(1, s.TrainLen*3/4), LocalWindow: s.TrainLen / 16}
	if err := s.Config.Decode(&p); err != nil {
		return nil, err
	}
	if err := atLeast("chunk_size", p.ChunkSize, 1); err != nil {
		return nil, err
	}
	if p.LocalWindow < 0 || p.LocalWindow >= p.ChunkSize {
		return nil, fmt.Errorf("position.distance_map.local_window: %d, want at least 0 and below chunk_size %d, so that a chunk holds a key", p.LocalWindow, p.ChunkSize)
	}
	return p, nil
}

// Name is dual_chunk.
func (DualChunk) Name() string { return "dual_chunk" }

// chunk is c, the keys of a chunk.
func (m DualChunk) chunk() int { return m.ChunkSize - m.LocalWindow }

// Spans gives the query's own chunk its true distances, and the chunk before too while the
// query is within local_window of its chunk's start; every earlier key is Alt.
func (m DualChunk) Spans(i int, dst []Span) []Span {
	c := m.chunk()
	exact := i / c * c
	if exact > 0 && i%c <= m.LocalWindow {
		exact -= c
	}
	return appendSplit(dst, 0, i+1, exact)
}

// AltQuery is min(2c − 1, chunk_size): the inter-chunk query position, which a clamped
// successive-chunk one equals.
func (m DualChunk) AltQuery(int) float64 { return float64(min(2*m.chunk()-1, m.ChunkSize)) }

// AltKey is the key's place in its chunk.
func (m DualChunk) AltKey(j int) float64 { return float64(j % m.chunk()) }
