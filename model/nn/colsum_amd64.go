package nn

// addRows64 adds rows rows of 64 values, ld apart from src, into dst[0:64], in row order.
//
//go:noescape
func addRows64(dst, src *float32, rows, ld int)
