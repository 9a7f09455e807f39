package nn

import (
	"math"

	"github.com/chewxy/hm"
	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Embed looks up the embedding of each token, wte[ids[r]], for ids holding batches of seqLen
// tokens one after another. With a position table pe (m, d), m ≥ seqLen, it adds pe[t] to the
// token at position t of its sequence. pe gets a gradient only when learned is set.
func Embed(ids, wte, pe *G.Node, seqLen int, learned bool) (*G.Node, error) {
	return EmbedAt(ids, wte, pe, seqLen, learned, nil)
}

// EmbedAt is Embed with the tokens of every sequence at the positions at (seqLen of them,
// increasing, each below pe's rows) rather than 0..seqLen−1: it adds pe[at[t]] to token t, and
// the gradient of that row of pe is the sum over the tokens placed there. at may instead hold
// positions for every token of the batch, sequence b's at [b·seqLen:], as evaluation draws them
// for each window. The op reads at in every pass, so a caller draws new positions by writing
// into it; nil is Embed.
func EmbedAt(ids, wte, pe *G.Node, seqLen int, learned bool, at []int) (*G.Node, error) {
	if seqLen <= 0 {
		return nil, errors.Errorf("Embed: sequence length %d", seqLen)
	}
	if at != nil && (len(at) == 0 || len(at)%seqLen != 0) {
		return nil, errors.Errorf("Embed: %d positions for sequences of %d", len(at), seqLen)
	}
	k, err := byDtype(wte, &embed[float32]{seqLen: seqLen, withPE: pe != nil, learned: learned, at: at},
		&embed[float64]{seqLen: seqLen, withPE: pe != nil, learned: learned, at: at})
	if err != nil {
		return nil, err
	}
	if pe == nil {
		return apply(k, ids, wte)
	}
	return apply(k, ids, wte, pe)
}

type embed[F float] struct {
	seqLen          int
	withPE, learned bool
	// at places token t at position at[t], or the token of row r at at[r] when it holds a
	// position for every row; nil at t.
	at []int
}

// position is the row of the position table added to the token of row r of the batch.
func (k *embed[F]) position(r int) int {
	switch {
	case k.at == nil:
		return r % k.seqLen
	case len(k.at) > k.seqLen:
		return k.at[r]
	}
	return k.at[r%k.seqLen]
}

// checkPositions refuses positions outside a table of rows rows.
func (k *embed[F]) checkPositions(rows int) error {
	for t, p := range k.at {
		if p < 0 || p >= rows {
			return errors.Errorf("Embed: position %d of token %d is outside the position table of %d rows", p, t, rows)
		}
	}
	return nil
}

func (*embed[F]) String() string { return "Embed" }
func (k *embed[F]) signature() ([]hm.Type, hm.Type) {
	if k.withPE {
		return []hm.Type{intTensor(1), floats(2), floats(2)}, floats(2)
	}
	return []hm.Type{intTensor(1), floats(2)}, floats(2)
}
func (k *embed[F]) diffWRT() []bool {
	if k.withPE {
		return []bool{false, true, k.learned}
	}
	return []bool{false, true}
}

func (k *embed[F]) shape(in []tensor.Shape) (tensor.Shape, error) {
	ids, wte := in[0], in[1]
	if len(ids) != 1 || len(wte) != 2 || ids[0]%k.seqLen != 0 || len(k.at) > k.seqLen && len(k.at) != ids[0] {
		return nil, errors.Errorf("Embed: shapes ids %v, wte %v do not fit sequences of %d", ids, wte, k.seqLen)
	}
	if k.withPE {
		pe := in[2]
		if len(pe) != 2 || pe[1] != wte[1] || pe[0] < k.seqLen {
			return nil, errors.Errorf("Embed: position table %v does not fit %d positions of width %d", pe, k.seqLen, wte[1])
		}
	}
	return tensor.Shape{ids[0], wte[1]}, nil
}

func (k *embed[F]) forward(out *tensor.Dense, in []*tensor.Dense) error {
	ids, wte, y := ints(in[0]), Values[F](in[1]), Values[F](out)
	vocab, d := in[1].Shape()[0], in[1].Shape()[1]
	var pe []F
	if k.withPE {
		pe = Values[F](in[2])
		if err := k.checkPositions(in[2].Shape()[0]); err != nil {
			return err
		}
	}
	for r, id := range ids {
		if id < 0 || id >= vocab {
			return errors.Errorf("Embed: token %d at %d is outside the vocabulary of %d", id, r, vocab)
		}
		row := y[r*d : (r+1)*d]
		copy(row, wte[id*d:(id+1)*d])
		if pe != nil {
			t := k.position(r)
			for i, v := range pe[t*d : (t+1)*d] {
				row[i] += v
			}
		}
	}
	return nil
}

func (k *embed[F]) backward(din []*tensor.Dense, dout, _ *tensor.Dense, in []*tensor.Dense) error {
	ids, dy := ints(in[0]), Values[F](dout)
	d := in[1].Shape()[1]
	dwte := Values[F](din[1])
	clear(dwte)
	var dpe []F
	if len(din) > 2 && din[2] != nil {
		dpe = Values[F](din[2])
		clear(dpe)
	}
	for r, id := range ids {
		row := dy[r*d : (r+1)*d]
		dw := dwte[id*d : (id+1)*d]
		for i, v := range row {
			dw[i] += v
		}
		if dpe != nil {
			t := k.position(r)
			dp := dpe[t*d : (t+1)*d]
			for i, v := range row {
				dp[i] += v
			}
		}
	}
	return nil
}

// CrossEntropy returns the mean over rows of -log softmax(logits[r])[targets[r]], for logits
// (n, vocab) and integer targets (n). A row whose target is negative carries no loss: it is
// left out of the mean and gets no gradient, so that a task trains on its answer's tokens only
// (task.NoTarget). With every target in the vocabulary it computes what it computed before
// targets could be left out, to the bit: the same sums in the same order.
func CrossEntropy(logits, targets *G.Node) (*G.Node, error) {
	k, err := byDtype(logits, &crossEntropy[float32]{}, &crossEntropy[float64]{})
	if err != nil {
		return nil, err
	}
	return apply(k, logits, targets)
}

type crossEntropy[F float] struct {
	prob    []F // softmax of the logits, kept for the backward pass
	rowLoss []float64
	scored  int // rows with a target, the mean's divisor
}

func (*crossEntropy[F]) String() string { return "CrossEntropy" }
func (*crossEntropy[F]) signature() ([]hm.Type, hm.Type) {
	return []hm.Type{floats(2), intTensor(1)}, floats(0)
}
func (*crossEntropy[F]) diffWRT() []bool { return []bool{true, false} }

func (*crossEntropy[F]) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in[0]) != 2 || len(in[1]) != 1 || in[0][0] != in[1][0] {
		return nil, errors.Errorf("CrossEntropy: shapes logits %v, targets %v do not fit", in[0], in[1])
	}
	return tensor.ScalarShape(), nil
}

func (k *crossEntropy[F]) forward(out *tensor.Dense, in []*tensor.Dense) error {
	logits, targets := Values[F](in[0]), ints(in[1])
	n, v := in[0].Shape()[0], in[0].Shape()[1]
	if len(k.prob) != len(logits) {
		k.prob = make([]F, len(logits))
	}
	k.scored = 0
	for r, t := range targets {
		if t >= v {
			return errors.Errorf("CrossEntropy: target %d at %d is outside the vocabulary of %d", t, r, v)
		}
		if t >= 0 {
			k.scored++
		}
	}
	if len(k.rowLoss) != n {
		k.rowLoss = make([]float64, n)
	}
	parallel(n, 20*v, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			if targets[r] < 0 {
				k.rowLoss[r] = 0
				continue
			}
			row, p := logits[r*v:(r+1)*v], k.prob[r*v:(r+1)*v]
			mx := row[0]
			for _, x := range row[1:] {
				if x > mx {
					mx = x
				}
			}
			sum := expSum(p, row, mx)
			inv := F(1 / sum)
			for i := range p {
				p[i] *= inv
			}
			k.rowLoss[r] = float64(mx) + math.Log(sum) - float64(row[targets[r]])
		}
	})
	// Summed in row order, so the loss does not depend on how the rows were split; a row
	// without a target is skipped, not added as 0, so that the sum is that of the scored rows.
	var total float64
	for r, l := range k.rowLoss {
		if targets[r] >= 0 {
			total += l
		}
	}
	if k.scored == 0 {
		// Nothing to score: no loss, and (backward) no gradient, rather than 0/0.
		Values[F](out)[0] = 0
		return nil
	}
	Values[F](out)[0] = F(total / float64(k.scored))
	return nil
}

func (k *crossEntropy[F]) backward(din []*tensor.Dense, dout, _ *tensor.Dense, in []*tensor.Dense) error {
	targets, dl := ints(in[1]), Values[F](din[0])
	n, v := in[0].Shape()[0], in[0].Shape()[1]
	scale := F(float64(Values[F](dout)[0]) / float64(max(k.scored, 1)))
	parallel(n, 2*v, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			p, d := k.prob[r*v:(r+1)*v], dl[r*v:(r+1)*v]
			if targets[r] < 0 {
				clear(d)
				continue
			}
			for i, x := range p {
				d[i] = x * scale
			}
			d[targets[r]] -= scale
		}
	})
	return nil
}
