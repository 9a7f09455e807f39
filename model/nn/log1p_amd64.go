package nn

// log1p8 sets l[i], inv[i] = log1pf(e[i]) for n elements, n a multiple of 8: the assembly twin
// of log1pf, equal to it to the bit.
//
//go:noescape
func log1p8(e, l, inv *float32, n int)
