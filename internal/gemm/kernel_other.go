//go:build !amd64

package gemm

const haveKernel = false

func kernel6x16s(k int, a *float32, rs, cs int, b, c *float32, ldc int, alpha, beta float32, bias *float32) {
	panic("gemm: no micro-kernel on this architecture")
}

const haveAVX512 = false

func kernel12x32s(k int, a *float32, rs, cs int, b, c *float32, ldc int, alpha, beta float32, bias *float32) {
	panic("gemm: no micro-kernel on this architecture")
}

func copy16(dst *float32, dstep int, src *float32, sstep int, n int) {
	panic("gemm: no micro-kernel on this architecture")
}

func copy6(dst *float32, dstep int, src *float32, sstep int, n int) {
	panic("gemm: no micro-kernel on this architecture")
}
