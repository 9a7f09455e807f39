//go:build !amd64

package nn

const haveAVX2 = false

func geluForward8(x, y, t *float32, n int)       { panic("nn: no vector GELU on this architecture") }
func geluBackward8(x, t, dy, dx *float32, n int) { panic("nn: no vector GELU on this architecture") }

func expShift8(x *float32, n int, shift float32) { panic("nn: no vector exp on this architecture") }

func log1p8(e, l, inv *float32, n int) { panic("nn: no vector log1p on this architecture") }
