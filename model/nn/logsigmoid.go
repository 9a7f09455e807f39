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

// log1pRow sets l[i], inv[i] = log1pf(e[i]) for float32 rows, eight at a time with AVX2 (to the
// bit log1pf's), and reports whether it did: float64 rows take logSigmoids' math.Log1p.
func log1pRow[F float](e, l, inv []F) bool {
	d, ok := any(e).([]float32)
	if !ok {
		return false
	}
	dl, dinv := any(l).([]float32)[:len(d)], any(inv).([]float32)[:len(d)]
	n := 0
	if haveAVX2 && len(d) >= 8 {
		n = len(d) &^ 7
		log1p8(&d[0], &dl[0], &dinv[0], n)
	}
	for i := n; i < len(d); i++ {
		dl[i], dinv[i] = log1pf(d[i])
	}
	return true
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

// stickLogs32 is stickRow's loop of logSigmoids on float32 rows, from e, l and inv (log1pRow):
// row gets log σ(x), e's slice log(1−σ(x)), sig (if not nil) σ(x). It chooses between
// logSigmoids' two sides with the sign bit of x instead of a branch, which the signs of scores
// would make unpredictable, and reports whether it took the rows (float64 ones it leaves).
// Its values are logSigmoids', but for a log σ of +0 where logSigmoids gives −0 (x ≥ 0 and e
// rounded to 0), which the stick's sum makes +0 either way.
func stickLogs32[F float](row, sig, e, l, inv []F) bool {
	x32, ok := any(row).([]float32)
	if !ok {
		return false
	}
	e32, l32, inv32 := any(e).([]float32), any(l).([]float32), any(inv).([]float32)
	var s32 []float32
	if sig != nil {
		s32 = any(sig).([]float32)
	}
	for j, x := range x32 {
		bx := math.Float32bits(x)
		neg := uint32(int32(bx) >> 31) // all ones for x < 0 (and −0, where e·inv = inv)
		ej, lj, ij := e32[j], l32[j], inv32[j]
		if s32 != nil {
			s32[j] = math.Float32frombits(math.Float32bits(ij)&^neg | math.Float32bits(ej*ij)&neg)
		}
		x32[j] = math.Float32frombits(bx&neg) - lj   // min(x, 0) − l
		e32[j] = -math.Float32frombits(bx&^neg) - lj // −max(x, 0) − l
	}
	return true
}
