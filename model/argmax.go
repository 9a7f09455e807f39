package model

import "gorgonia.org/tensor"

// Argmax is the most likely token of row r of logits (rows, vocab), the first one on a tie:
// what greedy decoding writes there, as every accuracy measure reads it.
func Argmax(logits *tensor.Dense, r int) int {
	v := logits.Shape()[1]
	switch x := logits.Data().(type) {
	case []float32:
		return argmaxRow(x[r*v : (r+1)*v])
	case []float64:
		return argmaxRow(x[r*v : (r+1)*v])
	}
	return -1
}

func argmaxRow[F float32 | float64](row []F) int {
	best := 0
	for i, x := range row {
		if x > row[best] {
			best = i
		}
	}
	return best
}
