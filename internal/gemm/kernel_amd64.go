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
