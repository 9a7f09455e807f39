package nn

import (
	"math"
	"unsafe"
)

// logSigmoids returns log σ(x), log(1−σ(x)) = log σ(−x) and σ(x), given e = e^−|x|: with
// l = log(1+e), log σ(x) = min(x, 0) − l and log(1−σ(x)) = −max(x, 0) − l, with no cancellation
// on either side, and σ(x) is 1/(1+e) or e/(1+e). float64 takes math.Log1p, as the gradient
// checks use it; float32 log1pf.
func logSigmoids[F float](x, e F) (logSig, logRest, sig F) {
	var l, inv F
	if unsafe.Sizeof(x) == 4 {
		lf, invf := log1pf(float32(e))
		l, inv = F(lf), F(invf)
	} else {
		l, inv = F(math.Log1p(float64(e))), 1/(1+e)
	}
	if x >= 0 {
		return -l, -x - l, inv
	}
	return x - l, -l, e * inv
}

// log1pf returns log(1+e) and 1/(1+e) for e in [0, 1], in float32, with one division and no
// branch: log(1+e) = 2·atanh(s) = 2s·(1 + s²/3 + s⁴/5 + …) with s = e/(2+e) ≤ ⅓, whose terms
// past s¹²/13 add less than 2e-9 relatively. s comes from e itself, not from a rounded 1+e, so
// small e keep their bits (logf(1+e) would lose all of e below 6e-8). Its error is a few float32
// ulps, relative (TestLog1pf).
func log1pf(e float32) (l, inv float32) {
	a, b := 1+e, 2+e
	r := 1 / (a * b)
	s := e * a * r
	w := s * s
	p := float32(1.0 / 13)
	p = p*w + 1.0/11
	p = p*w + 1.0/9
	p = p*w + 1.0/7
	p = p*w + 1.0/5
	p = p*w + 1.0/3
	p = p*w + 1
	return 2 * s * p, b * r
}
