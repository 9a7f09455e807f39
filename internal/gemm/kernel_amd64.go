package gemm

import "golang.org/x/sys/cpu"

// haveKernel is true when the CPU runs the AVX2/FMA micro-kernel.
var haveKernel = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func kernel6x16s(k int, a *float32, rs, cs int, b, c *float32, ldc int, alpha, beta float32, bias *float32)

// haveAVX512 is true when the CPU (and the OS) run the AVX-512 kernel.
var haveAVX512 = cpu.X86.HasAVX512F

//go:noescape
func kernel12x32s(k int, a *float32, rs, cs int, b, c *float32, ldc int, alpha, beta float32, bias *float32)

// copy16 copies n runs of 16 values, src[r*sstep:][:16] to dst[r*dstep:][:16]: the rows of
// full panels of B, without a call to memmove for each (a Go array assignment makes one).
//
//go:noescape
func copy16(dst *float32, dstep int, src *float32, sstep int, n int)

// copy6 copies n runs of 6 values, src[r*sstep:][:6] to dst[r*dstep:][:6]: a depth step of
// full panels of a transposed A, for the 6×16 kernel.
//
//go:noescape
func copy6(dst *float32, dstep int, src *float32, sstep int, n int)
