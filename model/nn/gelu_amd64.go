package nn

import "golang.org/x/sys/cpu"

// haveAVX2 is true when the CPU runs the vectorised GELU.
var haveAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func geluForward8(x, y, t *float32, n int)

//go:noescape
func geluBackward8(x, t, dy, dx *float32, n int)
