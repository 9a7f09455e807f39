package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"extrapolate/data"
	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/training"
	"extrapolate/internal/cmdtest"
	"extrapolate/model"
	"extrapolate/position"
)

// contentText has lines of different lengths, longer than the training length of 16, so that
// CoPE's positions clamp and a head that counts lines could show it.
const contentText = "a\nbb\nccc\nfunc main() {\n\treturn\n}\n"

// trainTiny trains a model of two layers of two heads for a few steps with the position config
// pc and attention temperature a, and returns its checkpoint.
func trainTiny(t *testing.T, dir string, pc position.Config, a model.Attention) string {
	t.Helper()
	c := config.Default()
	c.Name = pc.Scheme
	c.Data = data.Config{Corpus: "text", Path: cmdtest.TextCorpus(t)}
	c.Model.DModel, c.Model.Layers, c.Model.Heads = 16, 2, 2
	c.Position, c.Attention = pc, a
	c.Train.SeqLen, c.Train.BatchSize, c.Train.Steps, c.Train.LogEvery = 16, 4, 10, 5
	c.Eval = config.Eval{Lengths: []int{16}, Tokens: 256, BatchTokens: 256}
	if err := c.Complete(); err != nil {
		t.Fatal(err)
	}
	rc, err := c.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	run := &training.Run{Resolved: rc, Dir: filepath.Join(dir, pc.Scheme)}
	if _, err := run.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(run.Dir, measure.CheckpointFile)
}

// shownContent is what a test reads of -json's content.
type shownContent struct {
	Content struct {
		Text   string   `json:"text"`
		IDs    []int    `json:"ids"`
		Tokens []string `json:"tokens"`
		Layers []struct {
			Layer         int           `json:"layer"`
			Scheme        string        `json:"scheme"`
			LogForget     [][]float64   `json:"log_forget"`
			Cumulative    [][]float64   `json:"cumulative"`
			ForgetBias    [][][]float64 `json:"forget_bias"`
			NPos          int           `json:"npos"`
			Positions     [][][]float64 `json:"positions"`
			AttendCurrent bool          `json:"attend_current"`
			Weights       [][][]float64 `json:"weights"`
			Remainder     [][]float64   `json:"remainder"`
		} `json:"layers"`
	} `json:"content"`
}

// showContent trains a tiny model with pc and temperature a, shows it on contentText with
// -json, draws it, and returns what it printed and the checkpoint.
func showContent(t *testing.T, pc position.Config, a model.Attention) (shownContent, *training.Trained) {
	t.Helper()
	dir := t.TempDir()
	ckpt := trainTiny(t, dir, pc, a)
	if err := os.WriteFile(filepath.Join(dir, "text.go"), []byte(contentText), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := inspect(t, dir, "-checkpoint", ckpt, "-text-file", "text.go", "-json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r shownContent
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	c := r.Content
	if c.Text != contentText || len(c.IDs) != len(contentText) || len(c.Tokens) != len(contentText) || c.IDs[1] != '\n' || c.Tokens[1] != "\n" {
		t.Fatalf("text %q, ids %v, tokens %q: want the text's bytes", c.Text, c.IDs, c.Tokens)
	}
	if len(c.Layers) != 2 || c.Layers[1].Layer != 1 || c.Layers[1].Scheme != pc.Scheme {
		t.Fatalf("%d layers, want both of the %s scheme", len(c.Layers), pc.Scheme)
	}
	tr, err := training.LoadCheckpoint(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	code, out, stderr = inspect(t, dir, "-checkpoint", ckpt, "-text", "x\ny\nz")
	// Named after the run's folder, pc.Scheme, and the text, given here.
	name, ok := strings.CutPrefix(strings.TrimSpace(out), "wrote ")
	if code != 0 || !ok || !strings.HasPrefix(name, "inspect_"+pc.Scheme+"_n512_text-") {
		t.Fatalf("drawing: exit %d, stdout %q: %s", code, out, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil || !strings.HasPrefix(string(b), "\x89PNG") {
		t.Fatalf("no picture: %v", err)
	}
	return r, tr
}

// byHand is layer 0 of a trained model written out in float64 from its weights, for a text:
// the LayerNorm of the token embeddings (no scheme here adds a table), and q and k from it.
type byHand struct {
	w            map[string][]float64
	d, heads, hd int
	x, q, k      [][]float64 // by token
	n            int
}

func layer0(t *testing.T, tr *training.Trained, ids []int) *byHand {
	t.Helper()
	c := tr.Model.Config
	b := &byHand{w: map[string][]float64{}, d: c.DModel, heads: c.Heads, hd: c.DModel / c.Heads, n: len(ids)}
	for _, p := range tr.Model.Params {
		v, err := float64s(p.Value)
		if err != nil {
			t.Fatal(err)
		}
		b.w[p.Name] = v
	}
	d := b.d
	for _, id := range ids {
		e := b.w["wte"][id*d : (id+1)*d]
		var mean, v float64
		for _, a := range e {
			mean += a / float64(d)
		}
		for _, a := range e {
			v += (a - mean) * (a - mean) / float64(d)
		}
		x := make([]float64, d)
		for i, a := range e {
			x[i] = (a-mean)/math.Sqrt(v+model.LayerNormEps)*b.w["h0.ln1_g"][i] + b.w["h0.ln1_b"][i]
		}
		b.x = append(b.x, x)
		b.q = append(b.q, affineRows(x, b.w["h0.wq"], b.w["h0.bq"]))
		b.k = append(b.k, affineRows(x, b.w["h0.wk"], b.w["h0.bk"]))
	}
	return b
}

// affineRows is x·w + b for w of (len(x), len(b)), row-major.
func affineRows(x, w, b []float64) []float64 {
	out := append([]float64(nil), b...)
	for i, a := range x {
		for j := range out {
			out[j] += a * w[i*len(b)+j]
		}
	}
	return out
}

// score is q_i·k_j/√d in head h.
func (b *byHand) score(h, i, j int) float64 {
	var s float64
	for x := h * b.hd; x < (h+1)*b.hd; x++ {
		s += b.q[i][x] * b.k[j][x]
	}
	return s / math.Sqrt(float64(b.hd))
}

func sig(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

// close1 compares at float64's rounding of sums over a few dozen terms.
func close1(got, want float64) bool { return math.Abs(got-want) <= 1e-9*(1+math.Abs(want)) }

// modelStats runs the checkpoint's model in float64 over ids with attention statistics and
// returns each layer's q and k as the model computed them, and the entropy and far mass of each
// head's attention at each query, at h·n+i, from the attention op itself.
func modelStats(t *testing.T, tr *training.Trained, ids []int) ([]model.LayerInputs, [][]float64, [][]float64, int) {
	t.Helper()
	m, err := widened(tr)
	if err != nil {
		t.Fatal(err)
	}
	c := tr.Config()
	s, err := position.New(c.Spec(c.EvalPhase().Position))
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.Graph(s, 1, len(ids), model.Options{AttentionStats: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	copy(g.IDs, ids)
	if _, err := g.Run(); err != nil {
		t.Fatal(err)
	}
	var in []model.LayerInputs
	var ent, far [][]float64
	for l := range m.Config.Layers {
		li, err := g.LayerInputs(l)
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, li)
		ent, far = append(ent, g.Stats[l].Entropy), append(far, g.Stats[l].FarMass)
	}
	return in, ent, far, m.Config.TrainLen
}

// softmaxEntropy is the entropy of softmax(scores).
func softmaxEntropy(scores []float64) float64 {
	mx := math.Inf(-1)
	for _, s := range scores {
		mx = max(mx, s)
	}
	var sum float64
	for _, s := range scores {
		sum += math.Exp(s - mx)
	}
	var e float64
	for _, s := range scores {
		p := math.Exp(s-mx) / sum
		if p > 0 {
			e -= p * math.Log(p)
		}
	}
	return e
}

// headScore is q_i·k_j/√d in head h of a layer's inputs as the model computed them.
func headScore(in model.LayerInputs, d, hd, h, i, j int) float64 {
	var s float64
	for x := h * hd; x < (h+1)*hd; x++ {
		s += in.Q[i*d+x] * in.K[j*d+x]
	}
	return s / math.Sqrt(float64(hd))
}

// TestFoXContent checks FoX's numbers on a trained checkpoint: layer 0's log gates and their
// running sum against log σ(x·W + b) of the LayerNorm of the token embeddings, from the
// checkpoint's weights by hand; and every layer's bias c_i − c_j against the attention op
// itself, whose entropy at each query must be that of softmax(q·k/√d + c_i − c_j).
func TestFoXContent(t *testing.T) {
	r, tr := showContent(t, position.Config{Scheme: "fox"}, model.Attention{})
	ids := r.Content.IDs
	b := layer0(t, tr, ids)
	l0 := r.Content.Layers[0]
	wf, bf := b.w["fox.wf"], b.w["fox.bf"] // (layers, d, heads), (layers, heads): layer 0 first
	for h := range b.heads {
		var c float64
		for tok := range b.n {
			z := bf[h]
			for x := range b.d {
				z += b.x[tok][x] * wf[x*b.heads+h]
			}
			c += math.Log(sig(z))
			if !close1(l0.LogForget[h][tok], math.Log(sig(z))) || !close1(l0.Cumulative[h][tok], c) {
				t.Fatalf("head %d token %d: log f %.17g, c %.17g; want %.17g, %.17g from the gate's weights", h, tok, l0.LogForget[h][tok], l0.Cumulative[h][tok], math.Log(sig(z)), c)
			}
		}
	}
	in, ent, _, _ := modelStats(t, tr, ids)
	d, hd := b.d, b.hd
	for l, cl := range r.Content.Layers {
		for h := range b.heads {
			for i := range b.n {
				row := cl.ForgetBias[h][i]
				if len(row) != i+1 || row[i] != 0 || !close1(row[0], cl.Cumulative[h][i]-cl.Cumulative[h][0]) {
					t.Fatalf("layer %d head %d: bias row %d %v, want c_i − c_j", l, h, i, row)
				}
				scores := make([]float64, i+1)
				for j := range scores {
					scores[j] = headScore(in[l], d, hd, h, i, j) + row[j]
				}
				if got, want := ent[l][h*b.n+i], softmaxEntropy(scores); !close1(got, want) {
					t.Fatalf("layer %d head %d query %d: the model's entropy %.17g, with the bias shown %.17g", l, h, i, got, want)
				}
			}
		}
	}
}

// TestCoPEContent checks CoPE's positions on a trained checkpoint: layer 0's p_ij against a
// direct sum of σ(q_i·k_k/√d) over the keys j..i, clamped to npos − 1, with q and k from the
// checkpoint's weights by hand; and every layer's against the attention op, whose entropy at each
// query must be that of softmax(q·k/√d + z_i(p_ij)), z_i(m) = q_i·e_m/√d interpolated.
func TestCoPEContent(t *testing.T) {
	r, tr := showContent(t, position.Config{Scheme: "cope"}, model.Attention{})
	ids := r.Content.IDs
	b := layer0(t, tr, ids)
	l0 := r.Content.Layers[0]
	if l0.NPos != 17 {
		t.Fatalf("npos %d, want the training length + 1", l0.NPos)
	}
	top, clamped := float64(l0.NPos-1), false
	for h := range b.heads {
		for i := range b.n {
			for j := 0; j <= i; j++ {
				var p float64
				for k := j; k <= i; k++ {
					p += sig(b.score(h, i, k))
				}
				clamped = clamped || p > top
				if want := min(p, top); !close1(l0.Positions[h][i][j], want) {
					t.Fatalf("head %d: p[%d][%d] = %.17g, want %.17g", h, i, j, l0.Positions[h][i][j], want)
				}
			}
		}
	}
	if !clamped {
		t.Error("no position reached npos − 1: the clamp is untested")
	}
	in, ent, _, _ := modelStats(t, tr, ids)
	d, hd, np := b.d, b.hd, l0.NPos
	emb := b.w["cope.emb"] // (layers, hd, npos)
	for l, cl := range r.Content.Layers {
		e := emb[l*hd*np : (l+1)*hd*np]
		for h := range b.heads {
			for i := range b.n {
				z := func(m int) float64 {
					var s float64
					for x := range hd {
						s += in[l].Q[i*d+h*hd+x] * e[x*np+m]
					}
					return s / math.Sqrt(float64(hd))
				}
				scores := make([]float64, i+1)
				for j := range scores {
					p := cl.Positions[h][i][j]
					f := math.Floor(p)
					w := p - f
					scores[j] = headScore(in[l], d, hd, h, i, j) + z(int(math.Ceil(p)))*w + z(int(f))*(1-w)
				}
				if got, want := ent[l][h*b.n+i], softmaxEntropy(scores); !close1(got, want) {
					t.Fatalf("layer %d head %d query %d: the model's entropy %.17g, with the positions shown %.17g", l, h, i, got, want)
				}
			}
		}
	}
}

// TestStickBreakingContent checks stick-breaking's weights on a trained checkpoint: layer 0's
// against the product formula β_ij·Π_{j<k<i}(1 − β_ik), β = σ(q·k/√d), with q and k from the
// checkpoint's weights by hand; that every row's weights and remainder sum to 1, the weights
// at most 1; and every layer's against the attention op's entropy and far mass at each query,
// also with Scalable-Softmax, whose factors multiply the scores.
func TestStickBreakingContent(t *testing.T) {
	stickContent(t, model.Attention{})
	stickContent(t, model.Attention{Scale: "ssmax"})
}

func stickContent(t *testing.T, a model.Attention) {
	r, tr := showContent(t, position.Config{Scheme: "stickbreaking"}, a)
	ids := r.Content.IDs
	b := layer0(t, tr, ids)
	l0 := r.Content.Layers[0]
	for h := range b.heads {
		for i := range b.n {
			for j := 0; j <= i && a.Scale == ""; j++ { // by hand without a temperature
				want := 0.0 // the query's own key is not attended
				if j < i {
					want = sig(b.score(h, i, j))
					for k := j + 1; k < i; k++ {
						want *= 1 - sig(b.score(h, i, k))
					}
				}
				if !close1(l0.Weights[h][i][j], want) {
					t.Fatalf("head %d: A[%d][%d] = %.17g, want %.17g by the product formula", h, i, j, l0.Weights[h][i][j], want)
				}
			}
		}
	}
	_, ent, far, trainLen := modelStats(t, tr, ids)
	for l, cl := range r.Content.Layers {
		for h := range b.heads {
			for i := range b.n {
				var sum, e, fm float64
				for j, a := range cl.Weights[h][i] {
					sum += a
					if a > 0 {
						e -= a * math.Log(a)
					}
					if i-j >= trainLen {
						fm += a
					}
				}
				if sum > 1 || !close1(sum+cl.Remainder[h][i], 1) {
					t.Fatalf("layer %d head %d row %d: weights sum to %.17g, remainder %.17g", l, h, i, sum, cl.Remainder[h][i])
				}
				if !close1(ent[l][h*b.n+i], e) || !close1(far[l][h*b.n+i], fm) {
					t.Fatalf("layer %d head %d query %d: the model's entropy and far mass %.17g, %.17g; of the weights shown %.17g, %.17g", l, h, i, ent[l][h*b.n+i], far[l][h*b.n+i], e, fm)
				}
			}
		}
	}
	if r.Content.Layers[0].Remainder[0][0] != 1 {
		t.Errorf("query 0 attends to nothing: remainder %g, want 1", r.Content.Layers[0].Remainder[0][0])
	}
}

// TestBadText checks that a text that cannot be shown is refused with one line naming its flag,
// exit 2, and no picture.
func TestBadText(t *testing.T) {
	dir := t.TempDir()
	ckpt := trainTiny(t, dir, position.Config{Scheme: "fox"}, model.Attention{})
	big := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(big, make([]byte, maxText+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "empty.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-checkpoint", ckpt, "-text-file", filepath.Join(dir, "missing.txt")}, "-text-file: "},
		{[]string{"-checkpoint", ckpt, "-text-file", dir}, "-text-file: "},
		{[]string{"-checkpoint", ckpt, "-text-file", big}, "-text-file " + big + ": more than the 1024 bytes"},
		{[]string{"-checkpoint", ckpt, "-text-file", filepath.Join(dir, "empty.txt")}, "empty"},
		{[]string{"-checkpoint", ckpt, "-text", ""}, "-text: empty"},
		{[]string{"-checkpoint", ckpt, "-text", "a", "-text-file", big}, "-text and -text-file"},
		{[]string{"-checkpoint", ckpt, "-text", strings.Repeat("a", maxText+1)}, "-text: 1025 bytes"},
		{[]string{"-scheme", "cope", "-text", "abc"}, "-text: needs -checkpoint"},
		{[]string{"-scheme", "cope"}, "cope has nothing to draw without a checkpoint"},
		{[]string{"-checkpoint", "../../examples/checkpoints/rope_ntk.ckpt", "-text", "abc"}, "-text: the rope scheme reads nothing from the content"},
	} {
		out := t.TempDir()
		for i, a := range c.args {
			if strings.HasPrefix(a, "../../") {
				abs, err := filepath.Abs(a)
				if err != nil {
					t.Fatal(err)
				}
				c.args[i] = abs
			}
		}
		code, _, stderr := inspect(t, out, c.args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("%v: exit %d, %q; want 2 and one line naming %s", c.args, code, msg, c.want)
		}
		if entries, _ := os.ReadDir(out); len(entries) != 0 {
			t.Errorf("%v: wrote a file", c.args)
		}
	}
}
