package config

import (
	"fmt"
	"sync"

	"extrapolate/data"
	"extrapolate/internal/par"
	"extrapolate/internal/sysmem"
	"extrapolate/model"
	"extrapolate/model/nn"
	"extrapolate/position"
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

// estimateMemory estimates the memory a run of c needs, with its schemes of the main phase and
// of evaluation, and the position ids of the main phase (nil for none), whose graph holds what
// the scheme adds over their whole range. It follows how model/nn sizes its
// buffers (every op keeps its output and, when training, its input gradient; attention keeps
// its probabilities for the backward pass) and rounds up, so that it errs towards refusing only
// what cannot fit, never towards letting a run die of out-of-memory. Float32 throughout.
func (c Config) estimateMemory(trainScheme, evalScheme position.Scheme, ids *position.IDs) MemoryEstimate {
	const f32 = 4
	d, l, h, v := int64(c.Model.DModel), int64(c.Model.Layers), int64(c.Model.Heads), int64(data.Vocab)
	params := 2*v*d + v + l*(12*d*d+13*d) + 2*d
	// The position scheme's own weights, and the model's exactly when the model builds.
	if n, err := paramCount(c.modelConfig(), trainScheme); err == nil {
		params = n
	}
	// What the scheme adds at n positions: kept in float32 in the graph (and its gradient when
	// training), and each piece made in float64 first, by the scheme and again when copied.
	positions := func(s position.Scheme, n int, training bool) int64 {
		if s == nil {
			return 0
		}
		pc, err := positionCost(s, c.Model.Layers, c.Model.Heads, c.Model.DModel, n)
		if err != nil {
			return 0
		}
		if !training && model.BiasByRow(s, c.Model.Heads, n) {
			// Evaluation computes this bias a query at a time (a row of n per worker).
			pc.Values -= pc.Bias
			pc.Largest = min(pc.Largest, pc.Values)
		}
		kept := f32 * pc.Values
		if training {
			kept *= 2
		}
		return kept + 2*8*pc.Largest
	}
	var e MemoryEstimate
	e.State = 7 * params * f32
	train := func(batch, n, r int) int64 {
		tok, t := int64(batch)*int64(n), int64(n)
		perLayer := tok*40*d + 2*int64(batch)*h*t*t
		// A layer with contextual positions keeps its scores too, for the gates.
		scores := int64(contextLayers(trainScheme, int(l))) * int64(batch) * h * t * t
		return f32*(l*perLayer+scores+4*tok*v) + positions(trainScheme, r, true)
	}
	r := c.Train.SeqLen
	if ids != nil {
		r = ids.Range
	}
	e.Train = train(c.Train.BatchSize, c.Train.SeqLen, r)
	if f := c.Train.Finetune; f != nil {
		e.Train = max(e.Train, train(max(1, c.Train.BatchSize*c.Train.SeqLen/f.SeqLen), f.SeqLen, f.SeqLen))
	}
	for _, n := range c.Eval.Lengths {
		at := n // evaluation at ids drawn from a range makes the scheme's pieces over the range
		if ids.AtEvaluation() {
			if ids.WindowApplicable(n) != nil {
				continue // not applicable: no graph is built
			}
			at = ids.Range
		}
		tok := int64(max(1, c.Eval.BatchTokens/n) * n)
		// Each layer's attention keeps, per worker, one head's q, k, v and output and a tile
		// of scores: linear in n.
		perWorker := nn.EvalScratch(n, c.Model.DModel/c.Model.Heads)
		if masked(evalScheme, int(l)) {
			perWorker = nn.MaskedEvalScratch(n, c.Model.DModel/c.Model.Heads)
		}
		scratch := int64(par.Workers()) * int64(perWorker)
		e.Eval = max(e.Eval, f32*(l*(tok*16*d+scratch)+3*tok*v)+positions(evalScheme, at, false))
	}
	return e
}

// paramCount is the number of weights of a model of mc with the scheme s, as the model makes
// them.
func paramCount(mc model.Config, s position.Scheme) (int64, error) {
	shapes, err := model.Shapes(mc, s)
	if err != nil {
		return 0, err
	}
	var params int64
	for _, sh := range shapes {
		n := int64(1)
		for _, x := range sh.Dims {
			n *= int64(x)
		}
		params += n
	}
	return params, nil
}

// PositionCost is what a position scheme returns for a model at n positions, in float64 values
// (as package position computes them): the work of computing it, and the memory it takes.
type PositionCost struct {
	// Values counts every layer's: the table added to the embeddings, the rotation's tables
	// (four for xPos, whose keys have their own) and the bias, heads × n² a layer for a bias per
	// query (FIRE), heads × n by distance; a fixed bias once, since the layers share it.
	Values int64
	// Bias is the part of Values that is bias.
	Bias int64
	// Largest is the largest single piece, one layer's bias or rotation: what is alive at once
	// when each piece is dropped before the next is made.
	Largest int64
}

// positionCost finds what s returns at n positions for a model of the given shape without
// computing anything at n: it asks the scheme at one position for the form of each piece (a
// bias per query or by distance, a separate key rotation), whose size at n follows.
func positionCost(s position.Scheme, layers, heads, dModel, n int) (PositionCost, error) {
	var c PositionCost
	add := func(v int64) { c.Values, c.Largest = c.Values+v, max(c.Largest, v) }
	if position.IsPerLayer(s) {
		for l := range layers {
			lc, err := positionCost(position.InLayer(s, l).Scheme, 1, heads, dModel, n)
			if err != nil {
				return c, err
			}
			c.Values, c.Bias, c.Largest = c.Values+lc.Values, c.Bias+lc.Bias, max(c.Largest, lc.Largest)
		}
		return c, nil
	}
	N, H := int64(n), int64(heads)
	table, err := position.TableForm(s)
	if err != nil {
		return c, err
	}
	if table != position.Absent {
		add(N * int64(dModel))
	}
	rot, err := position.RotationAt(s, 1)
	if err != nil {
		return c, err
	}
	if rot != nil {
		tables := int64(2)
		if rot.KeyCos != nil {
			tables = 4
		}
		for range layers { // the model asks for each layer's rotation
			add(tables * int64(len(rot.InvFreq)) * N)
		}
	}
	bias, err := position.BiasForm(s)
	if err != nil || bias == position.Absent {
		return c, err
	}
	b, err := position.BiasAt(s, position.ZeroWeights(s), 0, 1)
	if err != nil {
		return c, err
	}
	v := H * N
	if b.PerQuery {
		v *= N
	}
	times := 1 // a fixed bias is made once, for every layer; a learned one for each
	if bias == position.FromWeights {
		times = layers
	}
	for range times {
		c.Bias += v
		add(v)
	}
	return c, nil
}

// CheckInspect estimates what showing the scheme s of spec at n positions takes, as cmd/inspect
// does it: a fresh model's weights in float64, the rotation (with and without its scaling) and
// table, the bias by distance it keeps of each layer, and two of the largest piece the scheme
// returns, since the last may not be collected yet when the next is made; the layers' biases
// themselves are made one at a time. It refuses,
// naming flags, when that exceeds the memory available, and returns the scheme's cost otherwise.
func CheckInspect(spec position.Spec, s position.Scheme, n int, flags string) (PositionCost, error) {
	pc, err := positionCost(s, spec.Layers, spec.Heads, spec.DModel, n)
	if err != nil {
		return pc, err
	}
	params, err := paramCount(model.Config{DModel: spec.DModel, Layers: spec.Layers, Heads: spec.Heads, Vocab: 1, TrainLen: spec.TrainLen}, s)
	if err != nil {
		return pc, err
	}
	const f64 = 8
	need := f64 * (params + 2*(pc.Values-pc.Bias) + 2*pc.Largest + int64(spec.Layers)*int64(spec.Heads)*int64(n))
	avail, source := availableMemory()
	if uint64(need) > avail {
		return pc, fmt.Errorf("%s: showing the %s scheme at %d positions needs about %s of memory (the model's weights %s, the scheme's largest piece, one layer's, %s), more than the %s available (%s)",
			flags, s.Name(), n, bytesString(need), bytesString(f64*params), bytesString(f64*pc.Largest), bytesString(int64(avail)), source)
	}
	return pc, nil
}

// Evaluation states what evaluating a trained model of the config takes, for a command that
// only evaluates (cmd/eval): the state it loads and an evaluation batch's activations, and the
// memory available.
func (e MemoryEstimate) Evaluation() string {
	avail, source := availableMemory()
	return fmt.Sprintf("about %s of memory (weights and optimizer state %s, evaluation activations %s), of the %s available (%s)",
		bytesString(e.State+e.Eval), bytesString(e.State), bytesString(e.Eval), bytesString(int64(avail)), source)
}

// check refuses a config whose estimate exceeds the memory available, naming the field
// behind the largest part.
func (e MemoryEstimate) check() error {
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

// contextLayers is the number of the scheme's layers with contextual positions (CoPE).
func contextLayers(s position.Scheme, layers int) int {
	n := 0
	for l := 0; s != nil && l < layers; l++ {
		if _, ok := position.ContextPositionsOf(position.InLayer(s, l).Scheme); ok {
			n++
		}
	}
	return n
}

// masked reports whether a layer of the scheme attends through a window or a distance map,
// whose evaluation holds the masked path's larger scratch (nn.MaskedEvalScratch).
func masked(s position.Scheme, layers int) bool {
	if position.DistanceMapOf(s) != nil {
		return true
	}
	for l := 0; l < layers; l++ {
		if position.WindowOf(position.InLayer(s, l).Scheme) > 0 {
			return true
		}
	}
	return false
}
