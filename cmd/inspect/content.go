package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"gorgonia.org/tensor"

	"extrapolate/experiments/training"
	"extrapolate/internal/inputfile"
	"extrapolate/model"
	"extrapolate/position"
)

// The schemes that read the content (FoX's forget gates, CoPE's counted positions,
// stick-breaking's weights) have no numbers of their own to show: what they do depends on the
// text. For them, with a trained checkpoint, the command runs the model over a text and shows
// what each such layer made of it, from the model's own forward pass (model.Graph.LayerInputs).

// defaultText is the text read without -text or -text-file: a few lines of the Go standard
// library (bytes.Buffer), the kind of text the default corpus trains on, short enough to read
// every cell of a heat map, with newlines for a head that counts lines to show.
const defaultText = "func (b *Buffer) Len() int {\n\treturn len(b.buf) - b.off\n}\n\nfunc (b *Buffer) Cap() int {\n\treturn cap(b.buf)\n}\n"

// maxText bounds the text in bytes: a heat map of maxText² cells is maxCells.
const maxText = 1 << 10

// content is what the layers that read the content made of a text: its tokens, and for each
// such layer its numbers by head.
type content struct {
	Text string `json:"text"`
	// IDs are the tokens, the text's bytes; Tokens the same as text, a byte of 0x80 or more
	// written \xNN.
	IDs    []int          `json:"ids"`
	Tokens []string       `json:"tokens"`
	Layers []contentLayer `json:"layers"`
}

// contentLayer is one layer's numbers. Every matrix is a triangle by head, [head][i][j] for
// query i and key j ≤ i, with null for a key a sliding window hides from the query.
type contentLayer struct {
	Layer  int    `json:"layer"`
	Scheme string `json:"scheme"`
	Window int    `json:"window,omitempty"`
	// FoX: the log forget gates log f_t of each head and token, their running sum c_t =
	// Σ_{l≤t} log f_l, and the bias c_i − c_j the score of query i for key j gains.
	LogForget  [][]float64 `json:"log_forget,omitempty"`
	Cumulative [][]float64 `json:"cumulative,omitempty"`
	ForgetBias []triangle  `json:"forget_bias,omitempty"`
	// CoPE: the position p_ij = min(Σ_{k=j..i} σ(q_i·k_k/√d), npos−1) of key j for query i.
	NPos      int        `json:"npos,omitempty"`
	Positions []triangle `json:"positions,omitempty"`
	// Stick-breaking: the weights A_ij, and what each row leaves unattended, 1 − Σ_j A_ij.
	AttendCurrent bool        `json:"attend_current,omitempty"`
	Weights       []triangle  `json:"weights,omitempty"`
	Remainder     [][]float64 `json:"remainder,omitempty"`
}

// triangle is a matrix of queries by keys, row i holding keys 0..i; NaN marks a hidden key.
type triangle [][]float64

// MarshalJSON writes NaN as null, which JSON has and NaN it has not.
func (t triangle) MarshalJSON() ([]byte, error) {
	b := []byte{'['}
	for i, row := range t {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		for j, v := range row {
			if j > 0 {
				b = append(b, ',')
			}
			if math.IsNaN(v) {
				b = append(b, "null"...)
				continue
			}
			b = strconv.AppendFloat(b, v, 'g', -1, 64)
		}
		b = append(b, ']')
	}
	return append(b, ']'), nil
}

// readsContent lists the layers of a model of s with layers layers whose scheme reads the
// content.
func readsContent(s position.Scheme, layers int) []int {
	var out []int
	for l := range layers {
		in := position.InLayer(s, l).Scheme
		_, fox := position.ForgetGateOf(in)
		_, cope := position.ContextPositionsOf(in)
		_, sb := position.StickBreakingOf(in)
		if fox || cope || sb {
			out = append(out, l)
		}
	}
	return out
}

// readText returns the text -text or -text-file gives, or the default one; flag names the flag
// it came from, for the messages.
func (o *options) readText() (text []byte, flag string, err error) {
	switch {
	case o.given["text"] && o.given["text-file"]:
		return nil, "", errors.New("-text and -text-file: give one")
	case o.given["text-file"]:
		b, err := inputfile.ReadFile(o.textFile, maxText)
		if errors.Is(err, inputfile.ErrTooLarge) {
			return nil, "", fmt.Errorf("-text-file %s: more than the %d bytes shown", o.textFile, maxText)
		}
		if err != nil {
			return nil, "", fmt.Errorf("-text-file: %w", err)
		}
		if len(b) == 0 {
			return nil, "", fmt.Errorf("-text-file %s: empty; give a text", o.textFile)
		}
		return b, "-text-file", nil
	case o.given["text"]:
		if o.text == "" {
			return nil, "", errors.New("-text: empty; give a text")
		}
		if len(o.text) > maxText {
			return nil, "", fmt.Errorf("-text: %d bytes, more than the %d shown", len(o.text), maxText)
		}
		return []byte(o.text), "-text", nil
	}
	return []byte(defaultText), "-text", nil
}

// contentOf runs the trained model over text with scheme s and returns what the layers that
// read the content made of it; flag names where the text came from, for the messages.
func contentOf(t *training.Trained, s position.Scheme, text []byte, flag string) (*content, error) {
	c := t.Model.Config
	layers := readsContent(s, c.Layers)
	n := len(text)
	if cells := int64(len(layers)) * int64(c.Heads) * int64(n) * int64(n+1) / 2; cells > maxValues {
		return nil, fmt.Errorf("%s: %d bytes make %d values for %d layers of %d heads, above %d; give a shorter text", flag, n, cells, len(layers), c.Heads, maxValues)
	}
	m, err := widened(t)
	if err != nil {
		return nil, err
	}
	g, err := m.Graph(s, 1, n, model.Options{})
	if err != nil {
		return nil, fmt.Errorf("%s: %d bytes: %w", flag, n, err)
	}
	defer g.Close()
	out := &content{Text: string(text)}
	for i, b := range text {
		g.IDs[i] = int(b)
		out.IDs = append(out.IDs, int(b))
		out.Tokens = append(out.Tokens, token(b))
	}
	if _, err := g.Run(); err != nil {
		return nil, err
	}
	for _, l := range layers {
		in, err := g.LayerInputs(l)
		if err != nil {
			return nil, err
		}
		cl, err := layerContent(position.InLayer(s, l), in, c, n)
		if err != nil {
			return nil, err
		}
		cl.Layer = l
		out.Layers = append(out.Layers, cl)
	}
	return out, nil
}

// widened is the checkpoint's model in float64: the same weights, so that the numbers shown
// are the model's, without float32's rounding in sums over the text.
func widened(t *training.Trained) (*model.Model, error) {
	train, _ := t.Resolved.Schemes()
	m, err := model.New(t.Model.Config, train, tensor.Float64, 1)
	if err != nil {
		return nil, err
	}
	for i, p := range t.Model.Params {
		v, err := float64s(p.Value)
		if err != nil {
			return nil, fmt.Errorf("weight %s: %w", p.Name, err)
		}
		m.Params[i].Value = tensor.New(tensor.WithShape(p.Value.Shape()...), tensor.WithBacking(v))
	}
	return m, nil
}

func float64s(t *tensor.Dense) ([]float64, error) {
	switch x := t.Data().(type) {
	case []float32:
		out := make([]float64, len(x))
		for i, v := range x {
			out[i] = float64(v)
		}
		return out, nil
	case []float64:
		return append([]float64(nil), x...), nil
	}
	return nil, fmt.Errorf("values of type %v", t.Dtype())
}

// token writes one byte of the text as text.
func token(b byte) string {
	if b < 0x80 {
		return string(rune(b))
	}
	return fmt.Sprintf(`\x%02x`, b)
}

// layerContent computes the numbers of the scheme in slot from what its layer's attention read.
func layerContent(slot position.Slot, in model.LayerInputs, c model.Config, n int) (contentLayer, error) {
	s := slot.Scheme
	a := attn{n: n, heads: c.Heads, d: c.DModel, hd: c.DModel / c.Heads, window: position.WindowOf(s), q: in.Q, k: in.K}
	cl := contentLayer{Scheme: s.Name(), Window: a.window}
	if _, ok := position.ForgetGateOf(s); ok {
		cl.LogForget, cl.Cumulative, cl.ForgetBias = a.forget(in.LogForget)
	}
	if cp, ok := position.ContextPositionsOf(s); ok {
		w := position.WeightsOf(s)
		if cp.Embedding < 0 || cp.Embedding >= len(w) || len(w[cp.Embedding].Dims) != 3 {
			return cl, fmt.Errorf("the %s scheme's position embeddings are not a (layers, head_dim, npos) weight", s.Name())
		}
		cl.NPos = w[cp.Embedding].Dims[2]
		cl.Positions = a.positions(cl.NPos)
	}
	if sb, ok := position.StickBreakingOf(s); ok {
		cl.AttendCurrent = sb.AttendCurrent
		cl.Weights, cl.Remainder = a.stick(in.Scale, sb.AttendCurrent)
	}
	return cl, nil
}

// attn is one layer's queries and keys over a text of n tokens, and the keys each query sees.
type attn struct {
	n, heads, d, hd, window int
	q, k                    []float64
}

// firstKey is the first key query i sees: i − window + 1 with a sliding window, else 0.
func (a attn) firstKey(i int) int {
	if a.window > 0 {
		return max(0, i-a.window+1)
	}
	return 0
}

// score is q_i·k_j/√d in head h: the score before any temperature or bias.
func (a attn) score(h, i, j int) float64 {
	q, k := a.q[i*a.d+h*a.hd:], a.k[j*a.d+h*a.hd:]
	var s float64
	for x := range a.hd {
		s += q[x] * k[x]
	}
	return s / math.Sqrt(float64(a.hd))
}

// triangles returns a triangle per head, every key a window hides NaN.
func (a attn) triangles() []triangle {
	out := make([]triangle, a.heads)
	for h := range out {
		out[h] = make(triangle, a.n)
		for i := range a.n {
			out[h][i] = make([]float64, i+1)
			for j := range a.firstKey(i) {
				out[h][i][j] = math.NaN()
			}
		}
	}
	return out
}

// forget computes FoX's numbers from the log gates, (n, heads): by head, log f_t, c_t and
// c_i − c_j.
func (a attn) forget(logf []float64) (logF, cum [][]float64, bias []triangle) {
	bias = a.triangles()
	for h := range a.heads {
		lf, c := make([]float64, a.n), make([]float64, a.n)
		var sum float64
		for t := range a.n {
			lf[t] = logf[t*a.heads+h]
			sum += lf[t]
			c[t] = sum
		}
		for i := range a.n {
			for j := a.firstKey(i); j <= i; j++ {
				bias[h][i][j] = c[i] - c[j]
			}
		}
		logF, cum = append(logF, lf), append(cum, c)
	}
	return logF, cum, bias
}

// positions computes CoPE's p_ij: each row's gates σ(score) summed from the query back, clamped
// to npos − 1, as attention counts them.
func (a attn) positions(npos int) []triangle {
	p := a.triangles()
	for h := range a.heads {
		for i := range a.n {
			var sum float64
			for j := i; j >= a.firstKey(i); j-- {
				sum += sigmoid(a.score(h, i, j))
				p[h][i][j] = min(sum, float64(npos-1))
			}
		}
	}
	return p
}

// stick computes stick-breaking's weights A_ij = β_ij·Π(1 − β_ik) over the keys k between j
// and the query (and the query itself with attendCurrent), β = σ(z), z the score times the
// temperature's factor, in log space from the nearest key back as attention computes them; and
// each row's remainder. The query's own key has weight 0 without attendCurrent.
func (a attn) stick(scale []float64, attendCurrent bool) (w []triangle, rest [][]float64) {
	w = a.triangles()
	for h := range a.heads {
		r := make([]float64, a.n)
		for i := range a.n {
			last := i
			if !attendCurrent {
				last = i - 1
			}
			var surv, total float64 // Σ log(1 − β) of the nearer keys; Σ A
			for j := last; j >= a.firstKey(i); j-- {
				z := a.score(h, i, j)
				if scale != nil {
					z *= scale[h*a.n+i]
				}
				e := math.Log1p(math.Exp(-math.Abs(z)))
				w[h][i][j] = math.Exp(min(z, 0) - e + surv)
				surv += -max(z, 0) - e
				total += w[h][i][j]
			}
			r[i] = 1 - total
		}
		rest = append(rest, r)
	}
	return w, rest
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }
