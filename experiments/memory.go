package experiments

import (
	"fmt"
	"sync"

	"extrapolate/data"
	"extrapolate/internal/sysmem"
	"extrapolate/model"
)

// availableMemory is the memory a run may use; tests replace it.
var availableMemory = sync.OnceValues(sysmem.Available)

// MemoryEstimate is what a config needs in memory, in bytes, by part.
type MemoryEstimate struct {
	// State is the weights, their gradients, AdamW's two moments and the checkpoint's encoding
	// of all but the gradients.
	State int64
	// Train is the activations of a training step (or a fine-tuning step, whichever is larger).
	Train int64
	// Eval is the activations of an evaluation batch at the length that needs most.
	Eval int64
}

// Total is the peak: the state, and one graph's activations at a time, since a run closes each
// graph before building the next.
func (e MemoryEstimate) Total() int64 { return e.State + max(e.Train, e.Eval) }

// estimateMemory estimates the memory a run of c needs. It follows how model/nn sizes its
// buffers (every op keeps its output and, when training, its input gradient; attention keeps
// its probabilities for the backward pass) and rounds up, so that it errs towards refusing only
// what cannot fit, never towards letting a run die of out-of-memory. Float32 throughout.
func estimateMemory(c Config) MemoryEstimate {
	const f32 = 4
	d, l, h, v := int64(c.Model.DModel), int64(c.Model.Layers), int64(c.Model.Heads), int64(data.Vocab)
	params := 2*v*d + v + l*(12*d*d+13*d) + 2*d
	// The position scheme's own weights, and the model's exactly when the scheme builds.
	if s, _, err := c.Schemes(); err == nil {
		if shapes, err := model.Shapes(c.ModelConfig(), s); err == nil {
			params = 0
			for _, sh := range shapes {
				n := int64(1)
				for _, x := range sh.Dims {
					n *= int64(x)
				}
				params += n
			}
		}
	}
	var e MemoryEstimate
	e.State = 7 * params * f32
	train := func(batch, n int) int64 {
		tok, t := int64(batch)*int64(n), int64(n)
		perLayer := tok*40*d + 2*int64(batch)*h*t*t
		return f32 * (l*perLayer + 4*tok*v)
	}
	e.Train = train(c.Train.BatchSize, c.Train.SeqLen)
	if f := c.Train.Finetune; f != nil {
		e.Train = max(e.Train, train(max(1, c.Train.BatchSize*c.Train.SeqLen/f.SeqLen), f.SeqLen))
	}
	for _, n := range c.Eval.Lengths {
		tok, t := int64(max(1, c.Eval.BatchTokens/n)*n), int64(n)
		// Attention's per-worker scratch holds one n×n score matrix per core.
		e.Eval = max(e.Eval, f32*(l*(tok*16*d+4*t*t)+3*tok*v))
	}
	return e
}

// checkMemory refuses a config whose estimate exceeds the memory available, naming the field
// behind the largest part.
func (c Config) checkMemory() error {
	e := estimateMemory(c)
	avail, source := availableMemory()
	// The per-field limits of Check keep every product far below overflow.
	if uint64(e.Total()) <= avail {
		return nil
	}
	field, part := "model.d_model and model.layers", "weights and optimizer state"
	switch {
	case e.Train > e.State && e.Train >= e.Eval:
		field, part = "train.batch_size and train.seq_len", "training activations"
	case e.Eval > e.State:
		field, part = "eval.batch_tokens", "evaluation activations"
	}
	return fmt.Errorf("%s: this config needs about %s of memory (weights and optimizer state %s, training activations %s, evaluation activations %s), more than the %s available (%s); the %s are the largest part",
		field, bytesString(e.Total()), bytesString(e.State), bytesString(e.Train), bytesString(e.Eval), bytesString(int64(avail)), source, part)
}

// bytesString writes a size in binary units, as free and top do.
func bytesString(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	x, u := float64(n), 0
	for x >= 1024 && u < len(units)-1 {
		x /= 1024
		u++
	}
	if u == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f %s", x, units[u])
}
