package nn

// addRows adds rows rows of len(dst) values, ld apart in src, into dst: dst[j] += src[r·ld+j]
// for r = 0, 1, ..., column by column in row order, as a bias's gradient sums its output
// gradient's rows. For float32 with AVX2 it adds 64 columns at a time, kept in registers over
// the rows, to the bit the scalar loop (TestAddRowsIsScalar): each column's sums are the same
// additions in the same order.
func addRows[F float](dst, src []F, rows, ld int) {
	n := len(dst)
	if rows == 0 || n == 0 {
		return
	}
	_ = src[(rows-1)*ld+n-1] // the assembly reads through pointers: check the last value first
	j := 0
	if d, ok := any(dst).([]float32); ok && haveAVX2 {
		s := any(src).([]float32)
		for ; j+64 <= n; j += 64 {
			addRows64(&d[j], &s[j], rows, ld)
		}
	}
	for r := 0; r < rows; r++ {
		for i, v := range src[r*ld+j : r*ld+n] {
			dst[j+i] += v
		}
	}
}
