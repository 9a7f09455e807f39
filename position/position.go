// Package position holds the position schemes a transformer can be trained with, and a registry
// of them by name. A scheme acts at up to three places: it may add a vector to each input
// embedding (learned, sinusoidal), rotate the queries and keys inside attention (RoPE), or add a
// bias to the attention scores (ALiBi). A new scheme is one file that implements Scheme and
// registers a constructor in its init function:
//
//	func init() { position.Register("mine", newMine) }
package position

import (
	"errors"
	"fmt"
	"sort"
	"sync"
)

// Scheme gives a causal transformer its sense of position. Each method describes one place the
// scheme acts for sequences of n positions, and returns nil where the scheme does not act there.
// A scheme that cannot handle n positions returns an error wrapping ErrNotApplicable.
type Scheme interface {
	// Embedding returns the table added to the token embeddings: row t is added at position t.
	Embedding(n int) (*Table, error)
	// Rotation returns the rotation of each head's queries and keys by position.
	Rotation(n int) (*Rotation, error)
	// Bias returns bias[h][δ], added in head h to the score of a query for the key δ positions
	// before it, for δ < n.
	Bias(n int) ([][]float64, error)
}

// ErrNotApplicable says that a scheme cannot, by design, handle a sequence length.
var ErrNotApplicable = errors.New("not applicable")

// Table is an (Rows, Cols) matrix added to the token embeddings, row t at position t.
type Table struct {
	Rows, Cols int
	// Values holds the matrix row by row; it is nil for a learned table.
	Values []float64
	// Learned tables are weights of the model, trained and initialised like its others.
	Learned bool
}

// Rotation rotates pairs of dimensions of each head's queries and keys, pair p at position t by
// the angle t·InvFreq[p], so that the score of a query and a key depends on their distance only.
type Rotation struct {
	// InvFreq holds each pair's angular frequency, in radians per position.
	InvFreq []float64
	// Interleaved pairs dimensions (2p, 2p+1); otherwise (p, p+d/2), as rotate_half does.
	Interleaved bool
	// AttentionFactor multiplies both cos and sin (YaRN), so the scores scale by its square.
	AttentionFactor float64
	// Cos and Sin hold AttentionFactor·cos(t·InvFreq[p]) and ·sin at t·len(InvFreq)+p.
	Cos, Sin []float64
}

// NewRotation tabulates a rotation for n positions.
func NewRotation(invFreq []float64, interleaved bool, factor float64, n int) *Rotation {
	r := &Rotation{InvFreq: invFreq, Interleaved: interleaved, AttentionFactor: factor}
	p := len(invFreq)
	r.Cos, r.Sin = make([]float64, n*p), make([]float64, n*p)
	for t := 0; t < n; t++ {
		for i, f := range invFreq {
			s, c := sincos(float64(t) * f)
			r.Cos[t*p+i], r.Sin[t*p+i] = factor*c, factor*s
		}
	}
	return r
}

// Spec is what a scheme is built from: the model's shape and the position section of the config.
type Spec struct {
	DModel, Heads int
	// TrainLen is the sequence length the model is trained at.
	TrainLen int
	Config   Config
}

// HeadDim is the width of one attention head.
func (s Spec) HeadDim() int { return s.DModel / s.Heads }

// Factory builds a scheme, or says which config field is wrong.
type Factory func(Spec) (Scheme, error)

var (
	mu        sync.RWMutex
	factories = map[string]Factory{}
)

// Register makes a scheme available by name. It panics if the name is taken, as
// database/sql.Register does, since that is a programming error.
func Register(name string, f Factory) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := factories[name]; dup {
		panic("position: Register called twice for scheme " + name)
	}
	factories[name] = f
}

// Names lists the registered schemes, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	var names []string
	for n := range factories {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// New builds the scheme spec.Config.Scheme names.
func New(spec Spec) (Scheme, error) {
	mu.RLock()
	f, ok := factories[spec.Config.Scheme]
	mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("position.scheme: unknown scheme %q (known: %v)", spec.Config.Scheme, Names())
	}
	if spec.DModel <= 0 || spec.Heads <= 0 || spec.DModel%spec.Heads != 0 {
		return nil, fmt.Errorf("position: model width %d does not split into %d heads", spec.DModel, spec.Heads)
	}
	if spec.TrainLen <= 0 {
		return nil, fmt.Errorf("position: training length %d", spec.TrainLen)
	}
	return f(spec)
}
