#include "textflag.h"
#include "vec_amd64.h"

VEC(gc, 0x3f4c422a)     // √(2/π) = 0.7978845608
VEC(gca, 0x3d122279)    // √(2/π)·0.044715 = 0.0356774081
VEC(g3ca, 0x3ddb33b6)   // 3·√(2/π)·0.044715 = 0.1070322243
VEC(half, 0x3f000000)   // 0.5
VEC(one, 0x3f800000)    // 1
VEC(hi, 0x40fcf84f)     // 7.90531110763549805
VEC(lo, 0xc0fcf84f)     // -7.90531110763549805
VEC(a1, 0x3ba059dc)     // 4.89352455891786e-03
VEC(a3, 0x3a270ded)     // 6.37261928875436e-04
VEC(a5, 0x3779434a)     // 1.48572235717979e-05
VEC(a7, 0x335c0041)     // 5.12229709037114e-08
VEC(a9, 0xaebd37ff)     // -8.60467152213735e-11
VEC(a11, 0x2a61337e)    // 2.00018790482477e-13
VEC(a13, 0xa59f25c0)    // -2.76076847742355e-16
VEC(b0, 0x3ba059dd)     // 4.89352518554385e-03
VEC(b2, 0x3b14aa05)     // 2.26843463243900e-03
VEC(b4, 0x38f895d6)     // 1.18534705686654e-04
VEC(b6, 0x35a0d3d8)     // 1.19825839466702e-06

// func geluForward8(x, y, t *float32, n int)
//
// y = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) for n elements, n a multiple of 8, with tanh
// the rational approximation of tanhRational; t, when not nil, receives the tanh.
TEXT ·geluForward8(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ t+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JZ   fdone

floop:
	VMOVUPS     (SI), Y0
	VMULPS      Y0, Y0, Y1
	VMOVUPS     gca<>(SB), Y2
	VFMADD213PS gc<>(SB), Y1, Y2
	VMULPS      Y0, Y2, Y2
	VMAXPS      lo<>(SB), Y2, Y2
	VMINPS      hi<>(SB), Y2, Y2
	VMULPS      Y2, Y2, Y3
	VMOVUPS     a13<>(SB), Y4
	VFMADD213PS a11<>(SB), Y3, Y4
	VFMADD213PS a9<>(SB), Y3, Y4
	VFMADD213PS a7<>(SB), Y3, Y4
	VFMADD213PS a5<>(SB), Y3, Y4
	VFMADD213PS a3<>(SB), Y3, Y4
	VFMADD213PS a1<>(SB), Y3, Y4
	VMULPS      Y2, Y4, Y4
	VMOVUPS     b6<>(SB), Y5
	VFMADD213PS b4<>(SB), Y3, Y5
	VFMADD213PS b2<>(SB), Y3, Y5
	VFMADD213PS b0<>(SB), Y3, Y5
	VDIVPS      Y5, Y4, Y4
	TESTQ       DX, DX
	JZ          fskip
	VMOVUPS     Y4, (DX)
	ADDQ        $32, DX

fskip:
	VADDPS  one<>(SB), Y4, Y6
	VMULPS  half<>(SB), Y0, Y7
	VMULPS  Y7, Y6, Y6
	VMOVUPS Y6, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     floop

fdone:
	VZEROUPPER
	RET

// func geluBackward8(x, t, dy, dx *float32, n int)
//
// dx = dy·(0.5·(1+t) + 0.5·x·(1-t²)·√(2/π)·(1 + 3·0.044715·x²)) for n elements, n a multiple of 8.
TEXT ·geluBackward8(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ t+8(FP), DX
	MOVQ dy+16(FP), BX
	MOVQ dx+24(FP), DI
	MOVQ n+32(FP), CX
	SHRQ $3, CX
	JZ   bdone

bloop:
	VMOVUPS     (SI), Y0
	VMOVUPS     (DX), Y1
	VMULPS      Y0, Y0, Y2
	VMOVUPS     g3ca<>(SB), Y3
	VFMADD213PS gc<>(SB), Y2, Y3
	VMULPS      Y1, Y1, Y4
	VMOVUPS     one<>(SB), Y5
	VSUBPS      Y4, Y5, Y5
	VMULPS      Y5, Y3, Y3
	VMULPS      Y0, Y3, Y3
	VADDPS      one<>(SB), Y1, Y6
	VADDPS      Y6, Y3, Y3
	VMULPS      half<>(SB), Y3, Y3
	VMULPS      (BX), Y3, Y3
	VMOVUPS     Y3, (DI)
	ADDQ        $32, SI
	ADDQ        $32, DX
	ADDQ        $32, BX
	ADDQ        $32, DI
	DECQ        CX
	JNZ         bloop

bdone:
	VZEROUPPER
	RET
