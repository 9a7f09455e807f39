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

// tanh returns tanh(x): math.Tanh for float64, tanhf for float32.
func tanh[F float](x F) F {
	if unsafe.Sizeof(x) == 4 {
		return F(tanhf(float32(x)))
	}
	return F(math.Tanh(float64(x)))
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

// tanhf is tanh(x) = 1 - 2/(e^(2x)+1) for |x| ≥ 0.55, and Cephes' odd polynomial below, where
// the formula would lose digits to cancellation. Its error is below 2e-7 relative or absolute.
func tanhf(x float32) float32 {
	a := x
	if a < 0 {
		a = -a
	}
	if a >= 0.55 {
		if a > 9 {
			a = 1
		} else {
			a = 1 - 2/(expf(2*a)+1)
		}
		if x < 0 {
			return -a
		}
		return a
	}
	z := x * x
	p := float32(-5.70498872745e-3)
	p = p*z + 2.06390887954e-2
	p = p*z - 5.37397155531e-2
	p = p*z + 1.33314422036e-1
	p = p*z - 3.33332819422e-1
	return p*z*x + x
}
