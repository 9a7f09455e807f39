#include "textflag.h"
#include "vec_amd64.h"

VEC(log2e, 0x3fb8aa3b) // log2(e) = 1.44269504088896341
VEC(magic, 0x4b400000) // 1.5·2^23 = 12582912, and as an integer the bits of it
VEC(ln2hi, 0x3f318000) // 0.693359375
VEC(ln2lo, 0xb95e8083) // -2.12194440e-4
VEC(p0, 0x39506967)    // 1.9875691500e-4
VEC(p1, 0x3ab743ce)    // 1.3981999507e-3
VEC(p2, 0x3c088908)    // 8.3334519073e-3
VEC(p3, 0x3d2aa9c1)    // 4.1665795894e-2
VEC(p4, 0x3e2aaaaa)    // 1.6666665459e-1
VEC(p5, 0x3f000000)    // 5.0000001201e-1
VEC(one, 0x3f800000)   // 1
VEC(bias, 0x0000007f)  // 127, the exponent bias, as an integer
VEC(hi, 0x42b0c0a5)    // 88.37626: above it, +Inf
VEC(lo, 0xc2aeac4f)    // -87.33654: below it, 0
VEC(inf, 0x7f800000)   // +Inf

// func expShift8(x *float32, n int, shift float32)
//
// x[i] = expf(x[i] - shift) for n elements, n a multiple of 8. Every operation is expf's, in
// its order, each rounded to float32 (a multiply, then an add: no FMA), so the values are
// expf's to the bit; out-of-range and NaN lanes are computed, then replaced as expf's branches
// replace them.
TEXT ·expShift8(SB), NOSPLIT, $0-20
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS shift+16(FP), Y15
	VMOVUPS      inf<>(SB), Y14
	SHRQ         $3, CX
	JZ           done

loop:
	VMOVUPS (SI), Y0
	VSUBPS  Y15, Y0, Y0         // x -= shift
	VMULPS  log2e<>(SB), Y0, Y1
	VADDPS  magic<>(SB), Y1, Y1 // t = x·log2e + 1.5·2^23: n in its low bits
	VSUBPS  magic<>(SB), Y1, Y2 // n = t - 1.5·2^23
	VMULPS  ln2hi<>(SB), Y2, Y3
	VSUBPS  Y3, Y0, Y3
	VMULPS  ln2lo<>(SB), Y2, Y4
	VSUBPS  Y4, Y3, Y3          // r = x - n·c1 - n·c2
	VMULPS  p0<>(SB), Y3, Y4
	VADDPS  p1<>(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  p2<>(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  p3<>(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  p4<>(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  p5<>(SB), Y4, Y4
	VMULPS  Y3, Y4, Y4
	VMULPS  Y3, Y4, Y4
	VADDPS  Y3, Y4, Y4
	VADDPS  one<>(SB), Y4, Y4   // p = p·r·r + r + 1
	VPSUBD  magic<>(SB), Y1, Y5
	VPADDD  bias<>(SB), Y5, Y5
	VPSLLD  $23, Y5, Y5         // 2^n
	VMULPS  Y5, Y4, Y4

	VCMPPS    $0x1e, hi<>(SB), Y0, Y6 // x > 88.37626 (false for NaN)
	VBLENDVPS Y6, Y14, Y4, Y4
	VCMPPS    $0x11, lo<>(SB), Y0, Y6 // x < -87.33654 (false for NaN)
	VANDNPS   Y4, Y6, Y4
	VCMPPS    $0x03, Y0, Y0, Y6       // NaN
	VBLENDVPS Y6, Y0, Y4, Y4
	VMOVUPS   Y4, (SI)

	ADDQ $32, SI
	DECQ CX
	JNZ  loop

done:
	VZEROUPPER
	RET
