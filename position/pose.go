package position

import (
	"fmt"

	"extrapolate/internal/rng"
)

// PoSE, positional skip-wise training (Zhu et al. 2024): the window of n tokens is cut into
// chunks, each at contiguous positions, with skips between them, so that the ids reach across
// a target length L_t = scaled_max_position_embeddings while the window stays n long. Chunk i
// of length l_i, starting at token st_i, sits at u_i + st_i, …, u_i + st_i + l_i − 1, with
// u_0 = 0 and u_i uniform in [u_{i−1}, L_t − n] (the paper's Eq. 3–4), so the last id is at
// most L_t − 1.
//
// With 2 chunks, the paper's default and its code's only case, the draw is train_pose.py's
// train_preprocess_function_pose: the first chunk's length is randint(1, (n+1)//2) and the skip
// randint(0, L_t − n), its revision with lt = 0. With more, the chunk lengths are drawn as the
// paper's coverage listing (Figure 6) draws three: each but the last randint(1, what is left −
// one for each chunk after it), the last the rest; then the skips, in order. The reference also
// takes each chunk's text from further on in the document (its v_i); here the window's text
// stays contiguous, since only the ids change: the paper finds the choice of v_i matters
// little (its Table 4). The paper also fine-tunes with a RoPE scaling; here a scaling stays the
// evaluation's (position.scaling), as the protocol has it. Evaluation places token t at t, as
// the reference's test_preprocess_function does (position_ids = arange): its chunks are
// contiguous, so the model has seen contiguous positions, and no AtEvaluation.
type poseParams struct {
	ScaledMax int `yaml:"scaled_max_position_embeddings"`
	Chunks    int `yaml:"chunks"`
}

func init() {
	RegisterIDs("pose", IDsType{
		Doc:        "Zhu et al. 2024: the window in chunks at contiguous positions with random skips between them, spanning at most scaled_max_position_embeddings",
		Params:     func() any { return &poseParams{Chunks: 2} },
		RangeField: "scaled_max_position_embeddings",
		Range: func(p any, n int) (int, error) {
			q := p.(*poseParams)
			if q.ScaledMax == 0 {
				return 0, fmt.Errorf("train.positions.scaled_max_position_embeddings: not given; want the target length the ids span, at least the training length %d", n)
			}
			if err := checkRange("scaled_max_position_embeddings", q.ScaledMax, n); err != nil {
				return 0, err
			}
			if q.Chunks < 1 || q.Chunks > n {
				return 0, fmt.Errorf("train.positions.chunks: %d, want 1 to the training length %d", q.Chunks, n)
			}
			return q.ScaledMax, nil
		},
		Draw: func(p any, g *rng.SplitMix64, dst []int) {
			q := p.(*poseParams)
			drawChunks(g, q.ScaledMax, q.Chunks, dst)
		},
	})
}

// drawChunks writes PoSE's ids for a window of len(dst) tokens in the given number of chunks
// spanning at most target positions.
func drawChunks(g *rng.SplitMix64, target, chunks int, dst []int) {
	n := len(dst)
	lengths := make([]int, chunks)
	if chunks == 2 {
		lengths[0] = randint(g, 1, (n+1)/2)
	} else {
		left := n
		for i := range chunks - 1 {
			lengths[i] = randint(g, 1, left-(chunks-1-i))
			left -= lengths[i]
		}
	}
	lengths[chunks-1] = n
	for _, l := range lengths[:chunks-1] {
		lengths[chunks-1] -= l
	}
	st, u := 0, 0
	for i, l := range lengths {
		if i > 0 {
			u = randint(g, u, target-n)
		}
		for k := range l {
			dst[st+k] = u + st + k
		}
		st += l
	}
}
