package position

import (
	"fmt"
	"math"
)

// FIRE is Functional Interpolation for Relative Positions (Li et al., 2024): each layer adds
// f(ψ(i−j) / ψ(max(L, i))) to the score of query i for key j, where ψ(x) = log(|c·x| + 1), f is
// an MLP from one input through Hidden ReLU units to one output per head, and c and the threshold
// L are learned. Dividing by ψ of the query's position maps every query's distances into [0, 1],
// so lengths past training interpolate rather than extrapolate.
//
// The settings follow the paper's PyTorch listing (its Appendix): c starts at 0.1 (init_c), the
// threshold is L = |m·L0| with a learned multiplier m starting at 1 and L0 = 512 (init_L=512.,
// fixed), and ε = 10⁻⁶ keeps the denominator positive. The MLP is drawn with the spread of
// PyTorch's default Linear initialisation. The paper trains FIRE with the rest of the model, at
// the same learning rate; it states no weight decay for it, and none is applied here.
// `threshold_init` and `lr_scale` change L0 and the learning rate of FIRE's weights.
type FIRE struct {
	Heads, Layers, Hidden int
	// L0 is the threshold's fixed base, init_L in the paper's listing.
	L0 float64
	// LRScale multiplies the learning rate of FIRE's weights.
	LRScale float64
}

// fireInitL is init_L of the paper's listing.
const fireInitL = 512

const fireEps = 1e-6

func init() {
	register("fire", func(s Spec) (Scheme, error) {
		p := struct {
			Hidden        int     `yaml:"hidden"`
			ThresholdInit float64 `yaml:"threshold_init"`
			LRScale       float64 `yaml:"lr_scale"`
		}{Hidden: 32, ThresholdInit: fireInitL, LRScale: 1}
		if err := s.Config.Decode(&p); err != nil {
			return nil, err
		}
		if p.Hidden < 1 || p.Hidden > 1<<12 {
			return nil, fmt.Errorf("position.hidden: %d, want 1 to %d", p.Hidden, 1<<12)
		}
		if err := checkPositive("position.threshold_init", p.ThresholdInit); err != nil {
			return nil, err
		}
		if err := checkPositive("position.lr_scale", p.LRScale); err != nil {
			return nil, err
		}
		return FIRE{Heads: s.Heads, Layers: s.Layers, Hidden: p.Hidden, L0: p.ThresholdInit, LRScale: p.LRScale}, nil
	})
}

// Name is fire.
func (FIRE) Name() string { return "fire" }

// Sources states FIRE's settings, and where the defaults come from.
func (f FIRE) Sources() string {
	return fmt.Sprintf("FIRE: an MLP 1 → %d → heads per layer, drawn with PyTorch's Linear spread; c from 0.1 and the threshold |m·L0| with m from 1 and L0 = %g; "+
		"learning rate × %g, no weight decay. Defaults: the paper's listing (init_c=0.1, init_L=512.); it states no weight decay. References: docs/references.md#fire.", f.Hidden, f.L0, f.LRScale)
}

// The weights, each with a leading layer dimension, in this order.
const (
	fireW1 = iota // (layers, hidden): the input's weight to each hidden unit
	fireB1        // (layers, hidden)
	fireW2        // (layers, hidden, heads)
	fireB2        // (layers, heads)
	fireC         // (layers)
	fireM         // (layers): the threshold's multiplier
)

// Weights: the MLP is drawn with the spread of PyTorch's default Linear initialisation
// (uniform ±1/√fan_in, standard deviation 1/√(3·fan_in)), normal here; c starts at 0.1 and the
// threshold's multiplier at 1.
func (f FIRE) Weights() []Weight {
	l, hd, h := f.Layers, f.Hidden, f.Heads
	fill := func(v float64) []float64 {
		x := make([]float64, l)
		for i := range x {
			x[i] = v
		}
		return x
	}
	std1, std2 := 1/math.Sqrt(3), 1/math.Sqrt(3*float64(hd))
	lr := f.LRScale
	return []Weight{
		{Name: "fire.w1", Dims: []int{l, hd}, Std: std1, LRScale: lr},
		{Name: "fire.b1", Dims: []int{l, hd}, Std: std1, LRScale: lr},
		{Name: "fire.w2", Dims: []int{l, hd, h}, Std: std2, LRScale: lr},
		{Name: "fire.b2", Dims: []int{l, h}, Std: std2, LRScale: lr},
		{Name: "fire.c", Dims: []int{l}, Init: fill(0.1), LRScale: lr},
		{Name: "fire.m", Dims: []int{l}, Init: fill(1), LRScale: lr},
	}
}

// layerWeights are one layer's slices of the weights.
type fireLayer struct {
	w1, b1, w2, b2 []float64
	c, m           float64
}

func (f FIRE) layer(w [][]float64, l int) fireLayer {
	hd, h := f.Hidden, f.Heads
	return fireLayer{
		w1: w[fireW1][l*hd : (l+1)*hd], b1: w[fireB1][l*hd : (l+1)*hd],
		w2: w[fireW2][l*hd*h : (l+1)*hd*h], b2: w[fireB2][l*h : (l+1)*h],
		c: w[fireC][l], m: w[fireM][l],
	}
}

// input is the MLP's input for query i and key j ≤ i, and the pieces its gradient needs:
// u = ψ(i−j), v = ψ(max(L, i)) + ε, and whether the threshold L = |m·L0| is what v uses.
func (f FIRE) input(p fireLayer, i, j int) (x, u, v float64, byThreshold bool) {
	ac := math.Abs(p.c)
	norm := float64(i)
	if t := math.Abs(p.m * f.L0); t > norm {
		norm, byThreshold = t, true
	}
	u = math.Log1p(ac * float64(i-j))
	v = math.Log1p(ac*norm) + fireEps
	return u / v, u, v, byThreshold
}

// Threshold is the layer's threshold L = |m·L0|: a query before it divides its distances by
// ψ(L), not by ψ of its own position, so its MLP inputs stay below 1.
func (f FIRE) Threshold(w [][]float64, layer int) float64 {
	return math.Abs(w[fireM][layer] * f.L0)
}

// Scale is the layer's learned c and threshold multiplier m.
func (f FIRE) Scale(w [][]float64, layer int) (c, m float64) {
	return w[fireC][layer], w[fireM][layer]
}

// Input is the layer's MLP input for query i and key j ≤ i: ψ(i−j) / (ψ(max(L, i)) + ε).
func (f FIRE) Input(w [][]float64, layer, i, j int) float64 {
	x, _, _, _ := f.input(f.layer(w, layer), i, j)
	return x
}

// LearnedBias evaluates the layer's MLP at every query and earlier key.
func (f FIRE) LearnedBias(w [][]float64, layer, n int) (*Bias, error) {
	if layer < 0 || layer >= f.Layers {
		return nil, fmt.Errorf("fire: layer %d of %d", layer, f.Layers)
	}
	p := f.layer(w, layer)
	b := NewBias(f.Heads, n, true)
	out := make([]float64, f.Heads)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			x, _, _, _ := f.input(p, i, j)
			copy(out, p.b2)
			for k, w1 := range p.w1 {
				if a := w1*x + p.b1[k]; a > 0 {
					for h, w2 := range p.w2[k*f.Heads : (k+1)*f.Heads] {
						out[h] += w2 * a
					}
				}
			}
			for h, o := range out {
				b.Values[(h*n+i)*n+j] = o
			}
		}
	}
	return b, nil
}

// LearnedBiasRow evaluates the layer's MLP for query i and keys j0, j0+1, …, for head h only,
// summing in LearnedBias's order.
func (f FIRE) LearnedBiasRow(w [][]float64, layer, h, i, j0 int, dst []float64) {
	p := f.layer(w, layer)
	for k := range dst {
		x, _, _, _ := f.input(p, i, j0+k)
		o := p.b2[h]
		for u, w1 := range p.w1 {
			if a := w1*x + p.b1[u]; a > 0 {
				o += p.w2[u*f.Heads+h] * a
			}
		}
		dst[k] = o
	}
}

// LearnedBiasGrad back-propagates through the MLP and ψ to every weight of the layer.
func (f FIRE) LearnedBiasGrad(w [][]float64, layer, n int, dBias []float64, dw [][]float64) {
	p := f.layer(w, layer)
	d := f.layer(dw, layer)
	dg := make([]float64, f.Heads)
	var dc, dm float64
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			for h := range dg {
				dg[h] = dBias[(h*n+i)*n+j]
			}
			x, u, v, byThreshold := f.input(p, i, j)
			for h, g := range dg {
				d.b2[h] += g
			}
			var dx float64
			for k, w1 := range p.w1 {
				a := w1*x + p.b1[k]
				if a <= 0 {
					continue
				}
				var da float64
				for h, w2 := range p.w2[k*f.Heads : (k+1)*f.Heads] {
					d.w2[k*f.Heads+h] += dg[h] * a
					da += dg[h] * w2
				}
				d.w1[k] += da * x
				d.b1[k] += da
				dx += da * w1
			}
			// x = u/v with u = log(1+|c|·δ), v = log(1+|c|·N) + ε, N = max(i, |m·L0|).
			ac, sc := math.Abs(p.c), sign(p.c)
			delta, norm := float64(i-j), float64(i)
			if byThreshold {
				norm = math.Abs(p.m * f.L0)
			}
			du := sc * delta / (1 + ac*delta)
			dv := sc * norm / (1 + ac*norm)
			dc += dx * (du*v - u*dv) / (v * v)
			if byThreshold {
				dvdN := ac / (1 + ac*norm)
				dm += dx * (-u / (v * v)) * dvdN * sign(p.m) * f.L0
			}
		}
	}
	dw[fireC][layer] += dc
	dw[fireM][layer] += dm
}

func sign(x float64) float64 {
	if x < 0 {
		return -1
	}
	return 1
}
