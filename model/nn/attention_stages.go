package nn

import "github.com/pkg/errors"

// Attention is a pipeline of stages, as x-transformers' Attend.forward reads: each query's raw
// scores q·kᵀ/√d, then the score stages in order, each changing the query's row of scores in
// place, then the normaliser, which turns the row into weights, then the weights times v.
//
//	raw scores → CoPE's gates (read the raw scores) → query scale → CoPE's position logits
//	           → bias (by distance, per query, a query at a time, at position ids)
//	           → forget gates → normaliser (softmax, stick-breaking, softpick, softmax with
//	             sinks) → ·v
//
// A stage is a value the op builds once from its config (stagesOf), holding what it reads; an
// input it takes is a row of AttentionConfig.inputs. The drivers (training's whole rows,
// evaluation's tiles, the online and masked paths) call adjust, which runs the stages, and the
// normaliser, which owns its rows, its evaluation of long rows and its backward pass. The stages' own backward bookkeeping (a learned bias's gradient, a learned query
// scale's, the forget gates' column sums, CoPE's) rides in the normaliser's backward loop, one
// pass over each row, as the fused kernel it is.

// A scoreStage changes one query's scores before the normaliser.
type scoreStage[F float] interface {
	// row changes row, query i's scores for keys j0, j0+1, …, in head h, all at most i, in place.
	row(row []F, h, i, j0 int, s *attnScratch[F])
}

// A refuser is a stage or normaliser that cannot be combined with something a config may ask
// for: it says so, naming it, when the op is built (checkPipeline).
type refuser interface {
	refuses(c AttentionConfig) error
}

// checkPipeline builds the op's stages and normaliser and asks each what it refuses.
func (k *attention[F]) checkPipeline() error {
	k.build()
	if !k.cfg.StickBreaking && k.cfg.AttendCurrent {
		return errors.New("Attention: AttendCurrent is for stick-breaking attention")
	}
	for _, st := range k.stages {
		if r, ok := st.(refuser); ok {
			if err := r.refuses(k.cfg); err != nil {
				return err
			}
		}
	}
	if r, ok := k.norm.(refuser); ok {
		return r.refuses(k.cfg)
	}
	return nil
}

// build makes the op's stages and normaliser from its config: when its shape is checked, or at
// its first pass for an op run without (a benchmark of the op alone).
func (k *attention[F]) build() {
	k.stages, k.norm = stagesOf(k), normaliserOf(k)
}

// stagesOf lists the score stages the config asks for, in the pipeline's order.
func stagesOf[F float](k *attention[F]) []scoreStage[F] {
	c := k.cfg
	var st []scoreStage[F]
	if c.CoPE {
		st = append(st, copeGates[F]{k})
	}
	if c.QueryScale {
		st = append(st, queryScale[F]{k})
	}
	if c.CoPE {
		st = append(st, copeAdd[F]{})
	}
	if c.Bias != NoBias {
		st = append(st, biasStage[F]{k})
	}
	if c.LogForget {
		st = append(st, forgetStage[F]{})
	}
	return st
}

// adjust runs the score stages on row, query i's scores for keys j0, j0+1, … in head h.
func (k *attention[F]) adjust(row []F, h, i, j0 int, s *attnScratch[F]) {
	for _, st := range k.stages {
		st.row(row, h, i, j0, s)
	}
}

// copeGates counts CoPE's positions from the raw scores, before any other stage changes them,
// into the worker's s.cl (copeRow); copeAdd adds them after the query scale.
type copeGates[F float] struct{ k *attention[F] }

func (copeGates[F]) refuses(c AttentionConfig) error {
	if c.Remap != nil {
		return errors.New("Attention: CoPE counts the gates of the keys a query sees, and takes no remap")
	}
	return nil
}

func (g copeGates[F]) row(row []F, _, i, j0 int, s *attnScratch[F]) { g.k.copeRow(row, i, j0, s) }

// copeAdd adds the position logits copeGates left in s.cl.
type copeAdd[F float] struct{}

func (copeAdd[F]) row(row []F, _, _, _ int, s *attnScratch[F]) {
	for j, x := range s.cl[:len(row)] {
		row[j] += x
	}
}

// queryScale multiplies query i's scores by its factor in head h: an attention temperature.
type queryScale[F float] struct{ k *attention[F] }

func (q queryScale[F]) row(row []F, h, i, _ int, _ *attnScratch[F]) {
	m := q.k.in.qscale[h*q.k.cfg.SeqLen+i]
	for j := range row {
		row[j] *= m
	}
}

// biasStage adds the bias in the config's form: by distance, per query, a query at a time, at
// the worker's position ids (adjustAt), or for an Alt span of a remap that maps distances, at
// the remap's distance (s.altDistance).
type biasStage[F float] struct{ k *attention[F] }

func (b biasStage[F]) row(row []F, h, i, j0 int, s *attnScratch[F]) {
	k := b.k
	t, bias := k.cfg.SeqLen, k.in.bias
	if ids := s.ids; ids != nil {
		k.adjustAt(row, bias, h, ids[i], ids[j0:j0+len(row)], s)
		return
	}
	switch k.cfg.Bias {
	case ByDistance:
		bh := bias[h*t : (h+1)*t]
		if s.altDistance {
			for j := range row {
				row[j] += bh[k.cfg.Remap.AltDistance(i, j0+j)]
			}
			return
		}
		for j := range row {
			row[j] += bh[i-j0-j]
		}
	case PerQuery:
		bq := bias[(h*t+i)*t+j0:]
		for j := range row {
			row[j] += bq[j]
		}
	case ByRow:
		buf := s.biasRow[:len(row)]
		k.cfg.BiasRow(h, i, j0, buf)
		for j, x := range buf {
			row[j] += F(x)
		}
	}
}

// forgetStage adds the forget gates' bias c_i − c_j from the worker's running sum s.cum.
type forgetStage[F float] struct{}

func (forgetStage[F]) row(row []F, _, i, j0 int, s *attnScratch[F]) { addForget(row, s.cum, i, j0) }

// A normaliser turns each query's scores, once the score stages have run, into its weights over
// the keys, and owns the passes that depend on how: its rows, its evaluation of rows too long
// for one tile, and its backward pass.
type normaliser[F float] interface {
	// rows runs the score stages on queries i0..i1−1 of a (sequence, head) task, rows ld apart
	// in p from query i0's, each with its keys in one tile, and replaces them by their weights;
	// in training it keeps what its backward pass needs.
	rows(p []F, ld, task, h, i0, i1 int, s *attnScratch[F], train bool)
	// online computes, in evaluation, the output of queries i0..i1−1 whose keys do not fit in
	// one tile, a tile of keys at a time, into s.o.
	online(s *attnScratch[F], task, h, i0, i1 int)
	// masks says whether evaluation with a remap, or a window that leaves keys out, takes the
	// masked path (attention_masked.go); one that does not applies a window itself (firstKey).
	// One that does is an onlineNorm whose rows fold as the softmax's (s.update): the masked
	// path starts each row with its reset and ends it as the softmax's finish does.
	masks() bool
	// backward takes one task's dp = do·vᵀ in ds to the gradient of its scores, times scale
	// and the row's query scale (qscale, nil for none), keeping a learned bias's and query
	// scale's parts and adding the forget gates' column sums into col (nil for none).
	backward(task, h int, pt, ds, qscale []F, scale F, col []float64)
}

// normaliserOf is the normaliser the config asks for.
func normaliserOf[F float](k *attention[F]) normaliser[F] {
	if k.cfg.Softpick {
		return softpick[F]{k}
	}
	if k.cfg.Sinks {
		return sinksSoftmax[F]{k}
	}
	if k.cfg.StickBreaking {
		return stick[F]{k}
	}
	return softmax[F]{k}
}

// softmax is the softmax over each query's keys.
type softmax[F float] struct{ k *attention[F] }

func (n softmax[F]) rows(p []F, ld, task, h, i0, i1 int, s *attnScratch[F], train bool) {
	n.k.softmaxRows(p, ld, task, h, i0, i1, s, train && n.k.raw != nil)
}
func (n softmax[F]) online(s *attnScratch[F], task, h, i0, i1 int) {
	n.k.queriesOnline(s, task, h, i0, i1, n)
}
func (softmax[F]) masks() bool { return true }
func (n softmax[F]) backward(task, h int, pt, ds, qscale []F, scale F, col []float64) {
	n.k.softmaxBackward(task, h, pt, ds, qscale, scale, col)
}

// stick is stick-breaking attention (attention_stick.go).
type stick[F float] struct{ k *attention[F] }

func (n stick[F]) rows(p []F, ld, task, h, i0, i1 int, s *attnScratch[F], train bool) {
	var sig []F
	if train {
		t := n.k.cfg.SeqLen
		sig = n.k.sig[task*t*t : (task+1)*t*t]
	}
	n.k.stickRows(p, ld, task, h, i0, i1, s, sig, train && n.k.raw != nil)
}
func (n stick[F]) online(s *attnScratch[F], task, h, i0, i1 int) {
	n.k.queriesStick(s, task, h, i0, i1)
}
func (stick[F]) masks() bool { return false }
func (n stick[F]) backward(task, h int, pt, ds, qscale []F, scale F, _ []float64) {
	t := n.k.cfg.SeqLen
	n.k.stickBackward(task, h, pt, ds, n.k.sig[task*t*t:(task+1)*t*t], qscale, scale)
}
