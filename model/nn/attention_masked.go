package nn

import (
	"math"

	"github.com/pkg/errors"
)

// Span is a run of keys [From, To) that a query attends to; Alt ones are scored at the remap's
// alternate positions.
type Span struct {
	From, To int
	Alt      bool
}

// Remap lets each query of an evaluation attention see some keys only, some of them scored as if
// the query and the key stood at other positions: the distance maps with which a model reads past
// its training length (ReRoPE, Self-Extend, LM-Infinite, StreamingLLM, STRING, Dual Chunk
// Attention). A key in none of a query's spans is masked. Alt scores use the same q, k, query
// scale and bias as the others; only the rotation, and for a bias by distance optionally the
// distance, change. The stats' far mass counts keys by their true distance.
type Remap struct {
	// Spans appends to dst the spans of query i: increasing and disjoint (an empty one is
	// dropped), every key at most i, the last one ending with key i and not Alt, so that a query
	// always sees itself at its true position. The op returns an error for spans that are not.
	// Workers call it at once, so it must be safe for concurrent use.
	Spans func(i int, dst []Span) []Span
	// AltCos and AltSin rotate the queries of Alt spans, and AltKeyCos and AltKeySin their keys:
	// the rotation's tables at each query's and each key's alternate position, laid out as
	// Positions.Cos (t*Pairs+p) and scaled alike. nil rotates by nothing, as at position 0 (the
	// keys of ReRoPE). Without a rotation (Positions.Pairs 0) they are unused.
	AltCos, AltSin, AltKeyCos, AltKeySin []float64
	// AltDistance, for a bias by distance only (the op refuses it with another form), gives the
	// distance d (0 ≤ d ≤ i) whose bias an Alt pair (i, j) takes; nil gives it the bias of its
	// true distance, i−j. A per-query bias
	// (PerQuery, ByRow) has no alternate positions: an Alt pair takes its bias at (i, j).
	AltDistance func(i, j int) int
}

// Evaluation with a window that leaves keys out or with a remap takes the masked path: the
// online softmax of queriesOnline, over narrower tiles of keys (so that a window skips most
// of the keys it leaves out), each scored at the true positions, at the alternate ones, or
// both, as the block's spans ask, and masked to the spans.
const maskedTileKeys = 256

// MaskedEvalScratch is EvalScratch for an attention with a Window or a Remap: q, k, v and the
// output of one head, q and k rotated at the alternate positions, and two tiles of scores.
func MaskedEvalScratch(seqLen, headDim int) int {
	return 6*seqLen*headDim + 2*tileQueries*min(seqLen, maskedTileKeys)
}

// masked reports whether evaluation takes the masked path: a remap, or a window that leaves a
// key out. A window as long as the sequence changes nothing.
func (c AttentionConfig) masked() bool {
	return c.Remap != nil || c.Window > 0 && c.Window < c.SeqLen
}

// firstKey is the first key query i sees through the window.
func (c AttentionConfig) firstKey(i int) int {
	if c.Window > 0 {
		return max(0, i-c.Window+1)
	}
	return 0
}

// checkMasking checks the window and the remap's tables against the rest of the config.
func (c AttentionConfig) checkMasking() error {
	if c.Window < 0 {
		return errors.Errorf("Attention: window %d", c.Window)
	}
	r := c.Remap
	if r == nil {
		return nil
	}
	if r.Spans == nil {
		return errors.New("Attention: remap without spans")
	}
	if r.AltDistance != nil && c.Bias != ByDistance {
		return errors.Errorf("Attention: the remap maps distances, but the bias (form %d) is not by distance", c.Bias)
	}
	n := c.SeqLen * c.Positions.Pairs
	for _, tab := range [][2][]float64{{r.AltCos, r.AltSin}, {r.AltKeyCos, r.AltKeySin}} {
		if (tab[0] == nil) != (tab[1] == nil) || tab[0] != nil && (len(tab[0]) < n || len(tab[1]) < n) {
			return errors.Errorf("Attention: remap tables of %d and %d values, want both nil or %d", len(tab[0]), len(tab[1]), n)
		}
	}
	return nil
}

// altRotates reports whether Alt scores differ from true ones before the bias: a remap of a
// rotation. Without one, Alt spans take the true scores and only the bias may change.
func (k *attention[F]) altRotates() bool {
	return k.cfg.Remap != nil && k.cfg.Positions.Pairs > 0
}

// setupMasked sizes an evaluation worker's buffers for the masked path.
func (k *attention[F]) setupMasked(s *attnScratch[F], hd int) {
	t := k.cfg.SeqLen
	tile := tileQueries * min(t, maskedTileKeys)
	s.q, s.k, s.v, s.s = make([]F, t*hd), make([]F, t*hd), make([]F, t*hd), make([]F, tile)
	if k.altRotates() {
		s.qa, s.ka, s.sa = make([]F, t*hd), make([]F, t*hd), make([]F, tile)
		// The tables are the workers' to share: converted by the first one.
		if r := k.cfg.Remap; r.AltCos != nil && k.acos == nil {
			k.acos, k.asin = convert[F](r.AltCos), convert[F](r.AltSin)
		}
		if r := k.cfg.Remap; r.AltKeyCos != nil && k.akcos == nil {
			k.akcos, k.aksin = convert[F](r.AltKeyCos), convert[F](r.AltKeySin)
		}
	}
	s.online()
	s.spanEnd = make([]int, tileQueries+1)
}

// forwardMasked is the evaluation forward pass with a window or a remap.
func (k *attention[F]) forwardMasked(o []F) error {
	c := k.cfg
	q, kk, v, d := k.in.q, k.in.k, k.in.v, k.in.d
	t, hd := c.SeqLen, d/c.Heads
	parallel(c.Batch*c.Heads, 4*t*t*hd, func(w, lo, hi int) {
		s := &k.scratch[w]
		for task := lo; task < hi && s.err == nil; task++ {
			b, h := task/c.Heads, task%c.Heads
			s.ids = c.idsOf(b) // nil with a remap: checkIDs refuses ids with one
			k.gather(s.q, q, b, h, d)
			k.gather(s.k, kk, b, h, d)
			if s.qa != nil {
				copy(s.qa, s.q)
				copy(s.ka, s.k)
				if k.acos != nil {
					k.rotate(s.qa, k.acos, k.asin, nil, false)
				}
				if k.akcos != nil {
					k.rotate(s.ka, k.akcos, k.aksin, nil, false)
				}
			}
			k.rotate(s.q, k.cos, k.sin, s.ids, false)
			k.rotate(s.k, k.kcos, k.ksin, s.ids, false)
			k.gather(s.v, v, b, h, d)
			k.cumulate(s, b, h)
			for i0 := 0; i0 < t && s.err == nil; i0 += tileQueries {
				s.err = k.queriesMasked(s, task, h, i0, min(i0+tileQueries, t))
			}
			scatter(o, s.o, b, h, t, d, hd)
		}
	})
	var err error
	for w := range k.scratch {
		if err == nil {
			err = k.scratch[w].err
		}
		k.scratch[w].err = nil
	}
	return err
}

// queriesMasked computes the output of queries i0..i1−1 on the masked path: an online softmax
// over the tiles of keys that some query of the block sees, skipping the others. A tile's true
// scores are computed for the rows that see some of its keys at their true positions, and its
// Alt scores for the rows that see some at alternate ones.
func (k *attention[F]) queriesMasked(s *attnScratch[F], task, h, i0, i1 int) error {
	first, err := k.blockSpans(s, i0, i1)
	if err != nil {
		return err
	}
	t := k.cfg.SeqLen
	hd := len(s.q) / t
	rows := i1 - i0
	out := s.o[i0*hd : i1*hd]
	clear(out)
	online := k.norm.(onlineNorm[F]) // a normaliser that masks folds as the softmax does
	for r := 0; r < rows; r++ {
		online.reset(s, r, h)
		s.first[r] = 0
	}
	scale := F(1 / math.Sqrt(float64(hd)))
	k.copeLogits(s, s.q, i0, rows, hd)
	for j0 := range k.keyTiles(first-first%maskedTileKeys, i1, maskedTileKeys) {
		j1 := min(j0+maskedTileKeys, i1)
		nk := j1 - j0
		tlo, thi, alo, ahi := s.tileRows(rows, j0, j1, s.qa != nil)
		lo, hi := min(tlo, alo), max(thi, ahi)
		if lo >= hi {
			continue // no query of the block sees these keys
		}
		p := s.s[:rows*nk]
		if tlo < thi {
			gemm(false, true, thi-tlo, nk, hd, scale, s.q[(i0+tlo)*hd:], hd, s.k[j0*hd:], hd, 0, p[tlo*nk:], nk)
		}
		var pa []F
		if alo < ahi {
			pa = s.sa[:rows*nk]
			gemm(false, true, ahi-alo, nk, hd, scale, s.qa[(i0+alo)*hd:], hd, s.ka[j0*hd:], hd, 0, pa[alo*nk:], nk)
		}
		for r := lo; r < hi; r++ {
			var alt []F
			if pa != nil {
				alt = pa[r*nk : (r+1)*nk]
			}
			corr := k.updateMasked(s, r, p[r*nk:(r+1)*nk], alt, h, i0+r, j0)
			if corr != 1 {
				for x := range out[r*hd : (r+1)*hd] {
					out[r*hd+x] *= F(corr)
				}
				s.first[r] *= corr
			}
			if j0 == 0 {
				s.first[r] = float64(p[r*nk])
			}
		}
		gemm(false, false, hi-lo, hd, nk, 1, p[lo*nk:], nk, s.v[j0*hd:], hd, 1, out[lo*hd:], hd)
	}
	k.finishOnline(s, out, task, i0, i1)
	return nil
}

// finishOnline divides the output of queries i0..i1−1 by their sums of exponentials and records
// their entropy and far mass, as queriesOnline does.
func (k *attention[F]) finishOnline(s *attnScratch[F], out []F, task, i0, i1 int) {
	t, st := k.cfg.SeqLen, k.cfg.Stats
	hd := len(s.q) / t
	online := k.norm.(onlineNorm[F])
	for r := 0; r < i1-i0; r++ {
		scale, ent, far := online.finish(s, r)
		inv := F(scale)
		for x := range out[r*hd : (r+1)*hd] {
			out[r*hd+x] *= inv
		}
		if st != nil {
			i := i0 + r
			st.ent[task*t+i], st.far[task*t+i], st.first[task*t+i] = ent, far, s.first[r]*scale
		}
	}
}

// blockSpans gathers the spans of queries i0..i1−1 into s.spans: the remap's, checked, with the
// empty ones dropped and the rest cut to the window, or the window alone. It returns the first
// key any of them sees.
func (k *attention[F]) blockSpans(s *attnScratch[F], i0, i1 int) (first int, err error) {
	c := k.cfg
	s.spans, first = s.spans[:0], i1
	for i := i0; i < i1; i++ {
		start := len(s.spans)
		s.spanEnd[i-i0] = start
		if c.Remap == nil {
			s.spans = append(s.spans, Span{From: c.firstKey(i), To: i + 1})
		} else {
			s.spans = c.Remap.Spans(i, s.spans)
			if err := checkSpans(s.spans[start:], i); err != nil {
				return 0, err
			}
			n := start
			for _, sp := range s.spans[start:] {
				sp.From = max(sp.From, c.firstKey(i))
				if sp.From < sp.To {
					s.spans[n], n = sp, n+1
				}
			}
			s.spans = s.spans[:n]
		}
		first = min(first, s.spans[start].From)
	}
	s.spanEnd[i1-i0] = len(s.spans)
	return first, nil
}

// checkSpans checks query i's spans against what Remap.Spans promises.
func checkSpans(spans []Span, i int) error {
	next := 0
	for _, sp := range spans {
		if sp.From < next || sp.To < sp.From {
			return errors.Errorf("Attention: query %d's spans %v are not increasing and disjoint", i, spans)
		}
		next = sp.To
	}
	if n := len(spans); n == 0 || spans[n-1].To != i+1 || spans[n-1].From > i || spans[n-1].Alt {
		return errors.Errorf("Attention: query %d's spans %v do not end with key %d at its true position", i, spans, i)
	}
	return nil
}

// tileRows returns the rows of the block that see some of keys j0..j1−1 at their true positions,
// [tlo, thi), and at alternate ones, [alo, ahi), each empty (lo ≥ hi) when none does. Without
// Alt scores of their own (alt false), Alt spans count as true ones.
func (s *attnScratch[F]) tileRows(rows, j0, j1 int, alt bool) (tlo, thi, alo, ahi int) {
	tlo, alo = rows, rows
	for r := 0; r < rows; r++ {
		for _, sp := range s.spans[s.spanEnd[r]:s.spanEnd[r+1]] {
			if sp.From >= j1 {
				break
			}
			if sp.To <= j0 {
				continue
			}
			if sp.Alt && alt {
				alo, ahi = min(alo, r), r+1
			} else {
				tlo, thi = min(tlo, r), r+1
			}
		}
	}
	return tlo, thi, alo, ahi
}

// updateMasked is update for row r, query i, over keys j0, j0+1, …: it takes the Alt spans'
// scores from alt (nil: the row's own), applies the query's scale and bias to the keys the row
// sees, folds them into the running sums and zeroes the others. A row that sees none of the
// keys is left as it was, its maximum −Inf until it sees one.
func (k *attention[F]) updateMasked(s *attnScratch[F], r int, row, alt []F, h, i, j0 int) float64 {
	j1 := j0 + len(row)
	spans := s.spans[s.spanEnd[r]:s.spanEnd[r+1]]
	m, seen := s.max[r], false
	for _, sp := range spans {
		a, b := max(sp.From, j0), min(sp.To, j1)
		if a >= j1 {
			break
		} else if a >= b {
			continue
		}
		x := row[a-j0 : b-j0]
		if sp.Alt && alt != nil {
			copy(x, alt[a-j0:b-j0])
		}
		k.adjustSpan(x, h, i, a, sp.Alt, s)
		for _, v := range x {
			m = max(m, float64(v))
		}
		seen = true
	}
	if !seen {
		clear(row)
		return 1
	}
	own, isOwn := k.norm.(spanWeigher[F])
	var corr float64
	if isOwn {
		corr = own.rebase(s, r, m)
	} else {
		corr = s.rebase(r, m)
	}
	var acc tileSums
	next, st := 0, k.cfg.Stats
	for _, sp := range spans {
		a, b := max(sp.From, j0)-j0, min(sp.To, j1)-j0
		if a >= len(row) {
			break
		} else if a >= b {
			continue
		}
		clear(row[next:a])
		if isOwn {
			own.weigh(row[a:b], m, i-(j0+a), st, &acc)
			next = b
			continue
		}
		// The softmax's exponentials, inline: this is the hot loop of every windowed or
		// remapped evaluation, and a call per span made it twice as slow
		// (BenchmarkAttentionRemap).
		for j, x := range row[a:b] {
			e := exp(x - F(m))
			row[a+j] = e
			acc.sum += float64(e)
			acc.ent += float64(e) * (float64(x) - m)
			if st != nil && i-(j0+a+j) >= st.Far {
				acc.far += float64(e)
			}
		}
		next = b
	}
	clear(row[next:])
	if isOwn {
		own.add(s, r, acc)
	} else {
		s.sum[r] += acc.sum
		s.ent[r] += acc.ent
		s.far[r] += acc.far
	}
	return corr
}

// A spanWeigher is a normaliser that folds the masked path's keys itself, a span at a time, not
// as the softmax does (softpick): the spans of one row in one tile are weighed against the
// row's new maximum into one tileSums, added to the row's running sums at once. The softmax,
// with or without sinks, takes the path's own loop.
type spanWeigher[F float] interface {
	// rebase moves row r's running sums to the maximum m and returns the factor by which its
	// earlier terms shrink.
	rebase(s *attnScratch[F], r int, m float64) float64
	// weigh replaces keys, one span's scores, by their weights before the row's normalisation,
	// against the maximum m, adding their sums into acc; the first key is diag positions back
	// from the query, the next diag−1, and so on.
	weigh(keys []F, m float64, diag int, st *AttentionStats, acc *tileSums)
	// add adds acc to row r's running sums.
	add(s *attnScratch[F], r int, acc tileSums)
}

// tileSums are one row's sums over the keys it sees in one tile: the normaliser's sum, the
// entropy's and the far keys' terms, and softpick's sum of its ReLUs.
type tileSums struct{ sum, ent, far, rsum float64 }

// rebase moves row r's running sums to the new maximum m and returns the factor by which its
// earlier exponentials shrink, as update does.
func (s *attnScratch[F]) rebase(r int, m float64) float64 {
	corr := 1.0
	if s.sum[r] > 0 {
		corr = math.Exp(s.max[r] - m)
		s.ent[r] = corr * (s.ent[r] - (m-s.max[r])*s.sum[r])
		s.sum[r] *= corr
		s.far[r] *= corr
	}
	s.max[r] = m
	return corr
}

// adjustSpan is adjust for the scores x of query i for keys a, a+1, … of one span: an Alt span's
// bias by distance is taken at the remap's AltDistance, when it has one. The forget gates' bias
// has no alternate positions: every pair takes it at its true (i, j).
func (k *attention[F]) adjustSpan(x []F, h, i, a int, alt bool, s *attnScratch[F]) {
	r := k.cfg.Remap
	s.altDistance = alt && r != nil && r.AltDistance != nil
	k.adjust(x, h, i, a, s)
	s.altDistance = false
}
