package model

import (
	"fmt"
	"math"
	"unsafe"

	"gorgonia.org/tensor"

	"extrapolate/internal/par"
	"extrapolate/model/nn"
)

// Schedule is the learning rate over training: a linear warmup to LR over Warmup steps, then a
// cosine decay to MinLR at step Steps.
type Schedule struct {
	LR, MinLR     float64
	Warmup, Steps int
}

// At returns the learning rate of step (counted from 1).
func (s Schedule) At(step int) float64 {
	if step <= s.Warmup {
		return s.LR * float64(step) / float64(s.Warmup)
	}
	if step >= s.Steps {
		return s.MinLR
	}
	p := float64(step-s.Warmup) / float64(s.Steps-s.Warmup)
	return s.MinLR + 0.5*(s.LR-s.MinLR)*(1+math.Cos(math.Pi*p))
}

// AdamW is Adam with decoupled weight decay (Loshchilov & Hutter), as torch.optim.AdamW does it,
// with the gradients clipped to a global norm first. Its state is exported so that a checkpoint
// can hold it: gorgonia's own solvers keep their moments unexported.
type AdamW struct {
	Schedule              Schedule
	Beta1, Beta2, Eps     float64
	WeightDecay, ClipNorm float64
	// Step counts the updates made.
	Step int
	// M and V are the first and second moments, one per parameter, in its dtype.
	M, V []*tensor.Dense

	sq []float64 // each gradient's sum of squares, for the norm
}

// NewAdamW returns an optimizer for the model's parameters with zero moments.
func NewAdamW(m *Model, s Schedule, weightDecay, clipNorm float64) *AdamW {
	o := &AdamW{Schedule: s, Beta1: 0.9, Beta2: 0.95, Eps: 1e-8, WeightDecay: weightDecay, ClipNorm: clipNorm}
	for _, p := range m.Params {
		o.M = append(o.M, tensor.New(tensor.WithShape(p.Value.Shape()...), tensor.Of(p.Value.Dtype())))
		o.V = append(o.V, tensor.New(tensor.WithShape(p.Value.Shape()...), tensor.Of(p.Value.Dtype())))
	}
	return o
}

// UpdateStats describes one update.
type UpdateStats struct {
	LR, GradNorm float64
}

// ErrNotFinite says a gradient held a NaN or an infinity; the weights were left unchanged.
var ErrNotFinite = fmt.Errorf("gradient is not finite")

// Update applies one step to the parameters given their gradients.
func (o *AdamW) Update(params []*Param, grads []*tensor.Dense) (UpdateStats, error) {
	// Each gradient's sum of squares is taken on its own, then added in order: the norm does
	// not depend on how the gradients are split between workers.
	if len(o.sq) != len(grads) {
		o.sq = make([]float64, len(grads))
	}
	par.For(len(grads), 1<<14, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			o.sq[i] = sumSquares(grads[i])
		}
	})
	var sq float64
	for _, s := range o.sq {
		sq += s
	}
	norm := math.Sqrt(sq)
	if math.IsNaN(norm) || math.IsInf(norm, 0) {
		return UpdateStats{GradNorm: norm}, ErrNotFinite
	}
	o.Step++
	lr := o.Schedule.At(o.Step)
	clip := 1.0
	if o.ClipNorm > 0 && norm > o.ClipNorm {
		clip = o.ClipNorm / norm
	}
	h := adamStep{
		lr: lr, clip: clip, b1: o.Beta1, b2: o.Beta2, eps: o.Eps,
		c1: 1 - math.Pow(o.Beta1, float64(o.Step)),
		c2: 1 - math.Pow(o.Beta2, float64(o.Step)),
	}
	for i, p := range params {
		wd := 0.0
		if p.Decay {
			wd = o.WeightDecay
		}
		// A weight with its own learning rate is a PyTorch parameter group with lr·LRScale:
		// its decoupled decay scales with it.
		hp := h
		if p.LRScale > 0 {
			hp.lr *= p.LRScale
		}
		switch p.Value.Dtype() {
		case tensor.Float32:
			adam(hp, wd, nn.Values[float32](p.Value), nn.Values[float32](grads[i]), nn.Values[float32](o.M[i]), nn.Values[float32](o.V[i]))
		default:
			adam(hp, wd, nn.Values[float64](p.Value), nn.Values[float64](grads[i]), nn.Values[float64](o.M[i]), nn.Values[float64](o.V[i]))
		}
		p.clamp()
	}
	return UpdateStats{LR: lr, GradNorm: norm}, nil
}

type adamStep struct{ lr, clip, b1, b2, eps, c1, c2 float64 }

// adamLanes is an adamStep's constants as adam4 reads them, each four times (one per lane).
type adamLanes [10][4]float64

func (h adamStep) lanes(decay float64) *adamLanes {
	var l adamLanes
	for i, x := range []float64{h.clip, h.b1, 1 - h.b1, h.b2, 1 - h.b2, decay, h.lr, h.c1, h.c2, h.eps} {
		l[i] = [4]float64{x, x, x, x}
	}
	return &l
}

func adam[F ~float32 | ~float64](h adamStep, wd float64, w, g, m, v []F) {
	decay := 1 - h.lr*wd
	var lanes *adamLanes
	if haveAVX2 && unsafe.Sizeof(w[0]) == 4 {
		lanes = h.lanes(decay)
	}
	// Each element is updated on its own, so splitting them between workers changes nothing.
	par.For(len(w), 30, func(_, lo, hi int) {
		if n := (hi - lo) &^ 3; lanes != nil && n > 0 {
			// Four at a time, to the bit the loop below (TestAdamVectorIsScalar).
			f32 := func(x []F) *float32 { return (*float32)(unsafe.Pointer(&x[lo])) }
			adam4(f32(w), f32(g), f32(m), f32(v), n, lanes)
			lo += n
		}
		for i := lo; i < hi; i++ {
			gi := float64(g[i]) * h.clip
			mi := h.b1*float64(m[i]) + (1-h.b1)*gi
			vi := h.b2*float64(v[i]) + (1-h.b2)*gi*gi
			m[i], v[i] = F(mi), F(vi)
			w[i] = F(float64(w[i])*decay - h.lr*(mi/h.c1)/(math.Sqrt(vi/h.c2)+h.eps))
		}
	})
}

func sumSquares(t *tensor.Dense) float64 {
	var s float64
	switch t.Dtype() {
	case tensor.Float32:
		for _, x := range nn.Values[float32](t) {
			s += float64(x) * float64(x)
		}
	default:
		for _, x := range nn.Values[float64](t) {
			s += x * x
		}
	}
	return s
}
