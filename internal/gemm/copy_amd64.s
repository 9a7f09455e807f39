#include "textflag.h"

// COPYARGS loads the arguments of copy16 and copy6, (dst *float32, dstep int, src *float32,
// sstep int, n int): dst in DI and src in SI, their steps in bytes in R8 and R9, n in CX.
#define COPYARGS \
	MOVQ dst+0(FP), DI; \
	MOVQ dstep+8(FP), R8; \
	SHLQ $2, R8; \
	MOVQ src+16(FP), SI; \
	MOVQ sstep+24(FP), R9; \
	SHLQ $2, R9; \
	MOVQ n+32(FP), CX

// func copy16(dst *float32, dstep int, src *float32, sstep int, n int)
//
// Copies n runs of 16 values, src[r*sstep:][:16] to dst[r*dstep:][:16], two 32-byte moves each.
TEXT ·copy16(SB), NOSPLIT, $0-40
	COPYARGS
	TESTQ CX, CX
	JZ    done16

loop16:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    R9, SI
	ADDQ    R8, DI
	DECQ    CX
	JNZ     loop16
	VZEROUPPER

done16:
	RET

// func copy6(dst *float32, dstep int, src *float32, sstep int, n int)
//
// Copies n runs of 6 values, src[r*sstep:][:6] to dst[r*dstep:][:6], a 16- and an 8-byte move
// each.
TEXT ·copy6(SB), NOSPLIT, $0-40
	COPYARGS
	TESTQ CX, CX
	JZ    done6

loop6:
	VMOVUPS (SI), X0
	VMOVQ   16(SI), X1
	VMOVUPS X0, (DI)
	VMOVQ   X1, 16(DI)
	ADDQ    R9, SI
	ADDQ    R8, DI
	DECQ    CX
	JNZ     loop6

done6:
	RET
