#include "textflag.h"

// func adam4(w, gr, mo, ve *float32, n int, h *adamLanes)
//
// One AdamW step for n elements, n a multiple of 4, four at a time in float64: the operations
// of adam's loop in its order, each rounded to float64 (no FMA; the square root and the
// divisions correctly rounded, as math.Sqrt and Go's / are), so the weights and moments are
// the loop's to the bit. h holds each constant four times: clip, b1, 1-b1, b2, 1-b2, decay,
// lr, c1, c2, eps.
TEXT ·adam4(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), DI
	MOVQ gr+8(FP), SI
	MOVQ mo+16(FP), R8
	MOVQ ve+24(FP), R9
	MOVQ n+32(FP), CX
	MOVQ h+40(FP), DX
	SHRQ $2, CX
	JZ   done

loop:
	VCVTPS2PD (SI), Y0
	VMULPD    0(DX), Y0, Y0    // gi = g·clip
	VCVTPS2PD (R8), Y1
	VMULPD    32(DX), Y1, Y1   // b1·m
	VMULPD    64(DX), Y0, Y2   // (1-b1)·gi
	VADDPD    Y2, Y1, Y1       // mi
	VCVTPS2PD (R9), Y3
	VMULPD    96(DX), Y3, Y3   // b2·v
	VMULPD    128(DX), Y0, Y4  // (1-b2)·gi
	VMULPD    Y0, Y4, Y4       // ·gi
	VADDPD    Y4, Y3, Y3       // vi
	VCVTPD2PSY Y1, X5
	VMOVUPS   X5, (R8)
	VCVTPD2PSY Y3, X5
	VMOVUPS   X5, (R9)
	VDIVPD    224(DX), Y1, Y6  // mi/c1
	VMULPD    192(DX), Y6, Y6  // lr·(mi/c1)
	VDIVPD    256(DX), Y3, Y7  // vi/c2
	VSQRTPD   Y7, Y7
	VADDPD    288(DX), Y7, Y7  // + eps
	VDIVPD    Y7, Y6, Y6
	VCVTPS2PD (DI), Y8
	VMULPD    160(DX), Y8, Y8  // w·decay
	VSUBPD    Y6, Y8, Y8
	VCVTPD2PSY Y8, X8
	VMOVUPS   X8, (DI)

	ADDQ $16, DI
	ADDQ $16, SI
	ADDQ $16, R8
	ADDQ $16, R9
	DECQ CX
	JNZ  loop

done:
	VZEROUPPER
	RET
