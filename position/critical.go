package position

import "math"

// Critical is where the critical dimension of Liu et al. 2024 ("Scaling Laws of RoPE-based
// Extrapolation", ICLR 2024, arXiv 2310.05209, §3.2) puts a rotary scheme's limit: only the
// pairs of dimensions whose period 2π/θ fits within the training length turn through a whole
// period in training, so only they are trained on every angle they will meet; the first pair
// that does not bounds how far the model extrapolates. With the ladder θ_n = β^(−2n/d) over d
// rotated dimensions this is the paper's d_extra = 2⌈(d/2)·log_β(T_train/2π)⌉ and
// T_extra = 2π·β^(d_extra/d); computed here from the frequencies the scheme turns by, it holds
// for a partial rotation (d its rotated width) and for p-RoPE, whose stopped pairs never turn.
type Critical struct {
	// Dimension is d_extra: twice the number of pairs whose period is below the training length.
	Dimension int `json:"dimension"`
	// Rotated is the number of dimensions the scheme rotates, twice its pairs.
	Rotated int `json:"rotated"`
	// TExtra is the period of the fastest pair whose period is not below the training length,
	// in positions: the predicted limit. +Inf when every pair turns within it, or when the
	// next pair is stopped (p-RoPE); JSON writes it as null then.
	TExtra float64 `json:"-"`
}

// CriticalOf is the critical dimension of s trained at trainLen positions, from its rotation
// there (RotationAt), and whether s rotates at all.
func CriticalOf(s Scheme, trainLen int) (Critical, bool, error) {
	rot, err := RotationAt(s, trainLen)
	if err != nil || rot == nil {
		return Critical{}, false, err
	}
	return criticalOf(rot.InvFreq, trainLen), true, nil
}

// criticalOf counts, in frequency order, the pairs whose period 2π/θ is below trainLen.
func criticalOf(invFreq []float64, trainLen int) Critical {
	c := Critical{Rotated: 2 * len(invFreq), TExtra: math.Inf(1)}
	for _, f := range invFreq {
		if f > 0 && 2*math.Pi/f < float64(trainLen) {
			c.Dimension += 2
			continue
		}
		if f > 0 {
			c.TExtra = 2 * math.Pi / f
		}
		break
	}
	return c
}
