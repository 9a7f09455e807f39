package nn

import (
	"math"
	"unsafe"
)

// The float32 kernels use these approximations in place of the math package's float64
// functions, which dominated the profile of a training step (GELU's tanh above all). The float64
// instances, which the gradient checks use, keep the math package's.

// exp returns e^x: math.Exp for float64, expf for float32.
func exp[F float](x F) F {
	if unsafe.Sizeof(x) == 4 {
		return F(expf(float32(x)))
	}
	return F(math.Exp(float64(x)))
}

// tanh returns tanh(x): math.Tanh for float64, tanhRational for float32.
func tanh[F float](x F) F {
	if unsafe.Sizeof(x) == 4 {
		return F(tanhRational(float32(x)))
	}
	return F(math.Tanh(float64(x)))
}

// tanhRational is Eigen's float tanh: the input clamped to ±7.9053, then a degree-13 odd
// polynomial over a degree-6 even one. It needs no exponential and no branch on the value, so
// the assembly GELU computes it eight lanes at a time; this is its scalar twin, with the same
// coefficients. Its error is below 4e-7, relative or (near ±1) absolute: a few float32 ulps.
func tanhRational(x float32) float32 {
	const c = 7.90531110763549805
	x = min(max(x, -c), c)
	x2 := x * x
	p := float32(-2.76076847742355e-16)
	p = p*x2 + 2.00018790482477e-13
	p = p*x2 - 8.60467152213735e-11
	p = p*x2 + 5.12229709037114e-08
	p = p*x2 + 1.48572235717979e-05
	p = p*x2 + 6.37261928875436e-04
	p = p*x2 + 4.89352455891786e-03
	q := float32(1.19825839466702e-06)
	q = q*x2 + 1.18534705686654e-04
	q = q*x2 + 2.26843463243900e-03
	q = q*x2 + 4.89352518554385e-03
	return p * x / q
}

// expf is Cephes' single-precision exponential: x = n·ln2 + r with |r| ≤ ln2/2, e^r from a
// degree-7 polynomial, and 2^n put into the exponent bits. Its relative error is below 2e-7.
// Above 88.376 it returns +Inf, a little early (e^x stays finite up to 88.72): 2^n must fit.
func expf(x float32) float32 {
	switch {
	case x != x:
		return x
	case x > 88.37626:
		return float32(math.Inf(1))
	case x < -87.33654:
		return 0
	}
	const (
		log2e = 1.44269504088896341
		c1    = 0.693359375
		c2    = -2.12194440e-4
	)
	// Round x·log2(e) to the nearest integer by adding 1.5·2^23, which leaves it in the low bits.
	t := x*log2e + 12582912
	n := t - 12582912
	r := x - n*c1 - n*c2
	p := float32(1.9875691500e-4)
	p = p*r + 1.3981999507e-3
	p = p*r + 8.3334519073e-3
	p = p*r + 4.1665795894e-2
	p = p*r + 1.6666665459e-1
	p = p*r + 5.0000001201e-1
	p = p*r*r + r + 1
	return p * math.Float32frombits((math.Float32bits(t)-0x4B400000+127)<<23)
}

// expSum sets dst[i] = exp(src[i] - shift) and returns the sum of dst, added in order in
// float64: a softmax's exponentials. dst may be src.
func expSum[F float](dst, src []F, shift F) float64 {
	dst = dst[:len(src)]
	copy(dst, src)
	expShiftRow(dst, shift)
	var sum float64
	for _, e := range dst {
		sum += float64(e)
	}
	return sum
}

// expShiftRow sets x[i] = exp(x[i] - shift) in place, as expSum does.
func expShiftRow[F float](x []F, shift F) {
	if d, ok := any(x).([]float32); ok {
		expShift(d, float32(shift))
		return
	}
	for i, v := range x {
		x[i] = exp(v - shift)
	}
}

// expShift sets x[i] = expf(x[i] - shift): eight at a time with AVX2, to the bit the values of
// expf, which the softmaxes spend most of their time in.
func expShift(x []float32, shift float32) {
	n := 0
	if haveAVX2 && len(x) >= 8 {
		n = len(x) &^ 7
		expShift8(&x[0], n, shift)
	}
	for i := n; i < len(x); i++ {
		x[i] = expf(x[i] - shift)
	}
}
