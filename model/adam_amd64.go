package model

import "golang.org/x/sys/cpu"

// haveAVX2 is true when the CPU runs the vector AdamW step.
var haveAVX2 = cpu.X86.HasAVX2

//go:noescape
func adam4(w, gr, mo, ve *float32, n int, h *adamLanes)
