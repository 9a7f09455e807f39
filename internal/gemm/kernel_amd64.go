package gemm

import "golang.org/x/sys/cpu"

// haveKernel is true when the CPU runs the AVX2/FMA micro-kernel.
var haveKernel = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func kernel6x16(k int, a, b, c *float32, ldc int, alpha, beta float32)

//go:noescape
func kernel6x16s(k int, a *float32, rs, cs int, b, c *float32, ldc int, alpha, beta float32)
