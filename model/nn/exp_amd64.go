package nn

// expShift8 sets x[i] = expf(x[i] - shift) for n elements, n a multiple of 8: the assembly
// twin of expf, equal to it to the bit.
//
//go:noescape
func expShift8(x *float32, n int, shift float32)
