package gemm

import (
	"fmt"
	"testing"
)

// BenchmarkKernel runs the micro-kernel alone on a tile whose panels stay in L1: the ceiling
// every product is measured against.
func BenchmarkKernel(b *testing.B) {
	if !Available() {
		b.Skip("no assembly kernel")
	}
	for _, k := range []int{32, 128, 256} {
		kr := kern
		a := make([]float32, kr.mr*k)
		pb := make([]float32, kr.nr*k)
		c := make([]float32, kr.mr*kr.nr)
		for i := range a {
			a[i] = 1
		}
		b.Run(fmt.Sprint("k", k), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				kr.run(k, &a[0], k, 1, &pb[0], &c[0], kr.nr, 1, 0, nil)
			}
			b.ReportMetric(float64(2*kr.mr*kr.nr*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
