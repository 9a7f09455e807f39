//go:build !amd64

package nn

func addRows64(dst, src *float32, rows, ld int) { panic("nn: no vector sums on this architecture") }
