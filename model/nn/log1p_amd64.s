#include "textflag.h"
#include "vec_amd64.h"

VEC(c13, 0x3d9d89d9)  // float32(1.0/13)
VEC(c11, 0x3dba2e8c)  // float32(1.0/11)
VEC(c9, 0x3de38e39)   // float32(1.0/9)
VEC(c7, 0x3e124925)   // float32(1.0/7)
VEC(c5, 0x3e4ccccd)   // float32(1.0/5)
VEC(c3, 0x3eaaaaab)   // float32(1.0/3)
VEC(one1p, 0x3f800000) // 1
VEC(two1p, 0x40000000) // 2

// func log1p8(e, l, inv *float32, n int)
//
// l[i], inv[i] = log1pf(e[i]) for n elements, n a multiple of 8. Every operation is log1pf's,
// in its order, each rounded to float32 (a multiply, then an add: no FMA), so the values are
// log1pf's to the bit.
TEXT ·log1p8(SB), NOSPLIT, $0-32
	MOVQ e+0(FP), SI
	MOVQ l+8(FP), DI
	MOVQ inv+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JZ   done

loop:
	VMOVUPS (SI), Y0             // e
	VADDPS  one1p<>(SB), Y0, Y1  // a = 1 + e
	VADDPS  two1p<>(SB), Y0, Y2  // b = 2 + e
	VMULPS  Y2, Y1, Y3           // a·b
	VMOVUPS one1p<>(SB), Y4
	VDIVPS  Y3, Y4, Y4           // r = 1 / (a·b)
	VMULPS  Y1, Y0, Y5           // e·a
	VMULPS  Y4, Y5, Y5           // s = e·a·r
	VMULPS  Y5, Y5, Y6           // w = s·s
	VMOVUPS c13<>(SB), Y7        // p = 1/13
	VMULPS  Y6, Y7, Y7
	VADDPS  c11<>(SB), Y7, Y7    // p = p·w + 1/11
	VMULPS  Y6, Y7, Y7
	VADDPS  c9<>(SB), Y7, Y7
	VMULPS  Y6, Y7, Y7
	VADDPS  c7<>(SB), Y7, Y7
	VMULPS  Y6, Y7, Y7
	VADDPS  c5<>(SB), Y7, Y7
	VMULPS  Y6, Y7, Y7
	VADDPS  c3<>(SB), Y7, Y7
	VMULPS  Y6, Y7, Y7
	VADDPS  one1p<>(SB), Y7, Y7  // p = p·w + 1
	VADDPS  Y5, Y5, Y8           // 2·s, exactly
	VMULPS  Y7, Y8, Y8           // l = 2·s·p
	VMULPS  Y4, Y2, Y9           // inv = b·r
	VMOVUPS Y8, (DI)
	VMOVUPS Y9, (DX)

	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, DX
	DECQ CX
	JNZ  loop

done:
	VZEROUPPER
	RET
