//go:build !amd64

package model

var haveAVX2 = false

func adam4(w, gr, mo, ve *float32, n int, h *adamLanes) {
	panic("model: no vector AdamW on this architecture")
}
