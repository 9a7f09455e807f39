package position

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// The golden numbers below come from testdata/golden.py, which computes them from the published
// formulas (Hugging Face's rope utilities, the ALiBi paper's get_slopes, Vaswani et al.'s table)
// in plain Python, apart from this package.

func near(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-6*math.Abs(want[i]) {
			t.Fatalf("%s[%d] = %.12g, want %.12g (all: %v)", what, i, got[i], want[i], got)
		}
	}
}

func rope(t *testing.T, d int, base float64, l int, sc *Scaling) *RoPE {
	t.Helper()
	s, err := New(Spec{DModel: d, Heads: 1, TrainLen: l, Config: Config{Scheme: "rope", Params: map[string]any{"base": base}, Scaling: sc}})
	if err != nil {
		t.Fatal(err)
	}
	return s.(*RoPE)
}

func factor(v float64) Factor { return Factor{Value: v} }

func TestRoPEFrequencies(t *testing.T) {
	f, a := rope(t, 16, 10000, 128, nil).Frequencies(512)
	near(t, "inv_freq", f, []float64{1, 0.316227766017, 0.1, 0.0316227766017, 0.01, 0.00316227766017, 0.001, 0.000316227766017})
	near(t, "attention factor", []float64{a}, []float64{1})
}

func TestScalingGolden(t *testing.T) {
	cases := []struct {
		name       string
		d          int
		base       float64
		l, n       int
		sc         Scaling
		want       []float64
		wantFactor float64
	}{
		{"linear", 16, 10000, 128, 512, Scaling{Type: "linear", Factor: factor(4)},
			[]float64{0.25, 0.0790569415042, 0.025, 0.00790569415042, 0.0025, 0.000790569415042, 0.00025, 7.90569415042e-05}, 1},
		// base' = 10000·4^(16/14) = 48760.5461682
		{"ntk", 16, 10000, 128, 512, Scaling{Type: "ntk", Factor: factor(4)},
			[]float64{1, 0.259412817015, 0.0672950096316, 0.0174571880196, 0.00452861832132, 0.00117478163592, 0.000304753413551, 7.90569415042e-05}, 1},
		{"dynamic_ntk at 2x", 16, 10000, 128, 256, Scaling{Type: "dynamic_ntk", Factor: factor(4)},
			[]float64{1, 0.251273762172, 0.0631385035559, 0.0158650493264, 0.00398647063128, 0.00100169547331, 0.000251699790128, 6.32455532034e-05}, 1},
		{"dynamic_ntk at 4x", 16, 10000, 128, 512, Scaling{Type: "dynamic_ntk", Factor: factor(4)},
			[]float64{1, 0.21921245982, 0.0480541025405, 0.0105340580224, 0.00230919677098, 0.000506204704375, 0.000110966378419, 2.43252127705e-05}, 1},
		{"yarn", 16, 10000, 128, 512, Scaling{Type: "yarn", Factor: factor(4)},
			[]float64{1, 0.237170824513, 0.05, 0.00790569415042, 0.0025, 0.000790569415042, 0.00025, 7.90569415042e-05}, 1.13862943611},
		{"yarn truncate false", 16, 10000, 128, 512, Scaling{Type: "yarn", Factor: factor(4), Params: map[string]any{"truncate": false}},
			[]float64{1, 0.225637479255, 0.0427056719887, 0.00790569415042, 0.0025, 0.000790569415042, 0.00025, 7.90569415042e-05}, 1.13862943611},
		{"linear d32", 32, 10000, 64, 256, Scaling{Type: "linear", Factor: factor(8)},
			[]float64{0.125, 0.0702926656488, 0.0395284707521, 0.0222284926255, 0.0125, 0.00702926656488, 0.00395284707521, 0.00222284926255, 0.00125, 0.000702926656488, 0.000395284707521, 0.000222284926255, 0.000125, 7.02926656488e-05, 3.95284707521e-05, 2.22284926255e-05}, 1},
		{"ntk d32", 32, 10000, 64, 256, Scaling{Type: "ntk", Factor: factor(8)},
			[]float64{1, 0.489546557409, 0.239655831871, 0.117322687456, 0.0574349177499, 0.0281170662595, 0.0137646129918, 0.0067384189042, 0.00329876977693, 0.00161490138798, 0.000790569415042, 0.000387020535527, 0.000189464570814, 9.27517283929e-05, 4.54062893285e-05, 2.22284926255e-05}, 1},
		{"dynamic_ntk d32", 32, 10000, 64, 256, Scaling{Type: "dynamic_ntk", Factor: factor(8)},
			[]float64{1, 0.453736795385, 0.205877079486, 0.0934140062893, 0.0423853718578, 0.019231802798, 0.00872617657102, 0.0039593873933, 0.00179651974752, 0.000815147113087, 0.000369862238859, 0.000167820106994, 7.61461575486e-05, 3.4550313507e-05, 1.56767485302e-05, 7.11311764016e-06}, 1},
		{"yarn d32", 32, 10000, 64, 256, Scaling{Type: "yarn", Factor: factor(8)},
			[]float64{1, 0.463931593282, 0.205548047911, 0.0844682719768, 0.03, 0.00702926656488, 0.00395284707521, 0.00222284926255, 0.00125, 0.000702926656488, 0.000395284707521, 0.000222284926255, 0.000125, 7.02926656488e-05, 3.95284707521e-05, 2.22284926255e-05}, 1.20794415417},
		{"yarn d32 truncate false", 32, 10000, 64, 256, Scaling{Type: "yarn", Factor: factor(8), Params: map[string]any{"truncate": false}},
			[]float64{1, 0.440305460116, 0.178976145843, 0.0620545540444, 0.0131944535406, 0.00702926656488, 0.00395284707521, 0.00222284926255, 0.00125, 0.000702926656488, 0.000395284707521, 0.000222284926255, 0.000125, 7.02926656488e-05, 3.95284707521e-05, 2.22284926255e-05}, 1.20794415417},
		{"yarn d32 beta 16/2", 32, 10000, 64, 256, Scaling{Type: "yarn", Factor: factor(8), Params: map[string]any{"beta_fast": 16, "beta_slow": 2}},
			[]float64{1, 0.398325105343, 0.131761569174, 0.0222284926255, 0.0125, 0.00702926656488, 0.00395284707521, 0.00222284926255, 0.00125, 0.000702926656488, 0.000395284707521, 0.000222284926255, 0.000125, 7.02926656488e-05, 3.95284707521e-05, 2.22284926255e-05}, 1.20794415417},
		{"ntk base 500", 8, 500, 32, 96, Scaling{Type: "ntk", Factor: factor(2.5)},
			[]float64{1, 0.155815561611, 0.0242784892401, 0.00378296643601}, 1},
		{"dynamic_ntk base 500", 8, 500, 32, 96, Scaling{Type: "dynamic_ntk", Factor: factor(2.5)},
			[]float64{1, 0.116378766232, 0.0135440172296, 0.00157623601501}, 1},
		{"yarn base 500", 8, 500, 32, 96, Scaling{Type: "yarn", Factor: factor(2.5)},
			[]float64{1, 0.148031976882, 0.01788854382, 0.00378296643601}, 1.09162907319},
		{"yarn base 500 truncate false", 8, 500, 32, 96, Scaling{Type: "yarn", Factor: factor(2.5), Params: map[string]any{"truncate": false}},
			[]float64{1, 0.0903738009182, 0.01788854382, 0.00378296643601}, 1.09162907319},
		{"llama3", 16, 10000, 64, 256, Scaling{Type: "llama3", Factor: factor(4)},
			[]float64{1.0, 0.25464790894703254, 0.025464790894703257, 0.007905694150420948, 0.0025, 0.0007905694150420947, 0.00025, 7.905694150420948e-05}, 1},
		{"llama3 d32", 32, 10000, 128, 512, Scaling{Type: "llama3", Factor: factor(8)},
			[]float64{1.0, 0.5623413251903491, 0.31622776601683794, 0.15825773502276955, 0.042751178754307596, 0.009417217099169338, 0.003952847075210474, 0.0022228492625486537, 0.00125, 0.0007029266564879364, 0.00039528470752104737, 0.00022228492625486537, 0.000125, 7.029266564879364e-05, 3.952847075210474e-05, 2.2228492625486534e-05}, 1},
		{"llama3 base 500, own factors and length", 16, 500, 32, 96, Scaling{Type: "llama3", Factor: factor(2.5), Params: map[string]any{"low_freq_factor": 2, "high_freq_factor": 8, "original_max_position_embeddings": 48}},
			[]float64{0.9639437268410976, 0.253527088294847, 0.08458970107524513, 0.03889969889864292, 0.01788854381999832, 0.008226284754383117, 0.003782966436012703, 0.0017396474208327853}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := c.sc
			f, a := rope(t, c.d, c.base, c.l, &sc).Frequencies(c.n)
			near(t, "inv_freq", f, c.want)
			near(t, "attention factor", []float64{a}, []float64{c.wantFactor})
		})
	}
}

// TestNTKBase checks the stretched base itself: 10000·4^(16/14).
func TestNTKBase(t *testing.T) {
	f, _ := rope(t, 16, 10000, 128, &Scaling{Type: "ntk", Factor: factor(4)}).Frequencies(512)
	base := math.Pow(f[1], -8) // inv_freq[1] = base'^(-2/16)
	near(t, "base'", []float64{base}, []float64{48760.5461682})
}

func TestScalingIdentity(t *testing.T) {
	plain, _ := rope(t, 16, 10000, 64, nil).Frequencies(64)
	for _, typ := range ScalingTypes() {
		// A factor of 1 changes nothing, at any length, except for dynamic_ntk, whose formula
		// b·(s·n/L - (s-1))^(d/(d-2)) still grows with n past L when s = 1.
		n := 256
		if typ == "dynamic_ntk" {
			n = 64
		}
		f, a := rope(t, 16, 10000, 64, &Scaling{Type: typ, Factor: factor(1)}).Frequencies(n)
		near(t, typ+" factor 1", f, plain)
		near(t, typ+" factor 1 attention", []float64{a}, []float64{1})
		// auto is 1 up to the training length.
		f, a = rope(t, 16, 10000, 64, &Scaling{Type: typ, Factor: Factor{Auto: true}}).Frequencies(64)
		near(t, typ+" auto at 1x", f, plain)
		near(t, typ+" auto at 1x attention", []float64{a}, []float64{1})
	}
	// dynamic_ntk leaves lengths up to the training length alone, whatever the factor.
	for _, n := range []int{1, 32, 64} {
		f, _ := rope(t, 16, 10000, 64, &Scaling{Type: "dynamic_ntk", Factor: factor(8)}).Frequencies(n)
		near(t, "dynamic_ntk below L", f, plain)
	}
}

func TestAutoFactorFollowsLength(t *testing.T) {
	auto := rope(t, 16, 10000, 64, &Scaling{Type: "linear", Factor: Factor{Auto: true}})
	fixed := rope(t, 16, 10000, 64, &Scaling{Type: "linear", Factor: factor(4)})
	a, _ := auto.Frequencies(256)
	b, _ := fixed.Frequencies(256)
	near(t, "auto at 4x", a, b)
	y := rope(t, 16, 10000, 64, &Scaling{Type: "yarn", Factor: Factor{Auto: true}})
	_, att := y.Frequencies(512)
	near(t, "yarn auto attention at 8x", []float64{att}, []float64{0.1*math.Log(8) + 1})
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// TestRoPERelative checks RoPE's defining property: the score of the same q and k vectors
// depends on their distance only, for plain and scaled RoPE and both pairings.
func TestRoPERelative(t *testing.T) {
	q := []float64{0.3, -1.2, 0.8, 0.1, -0.5, 0.9, 1.1, -0.2}
	k := []float64{-0.7, 0.4, 0.2, -1.0, 0.6, 0.3, -0.1, 0.5}
	configs := map[string]Config{
		"half":        {Scheme: "rope"},
		"interleaved": {Scheme: "rope", Params: map[string]any{"pairing": "interleaved"}},
		"yarn":        {Scheme: "rope", Scaling: &Scaling{Type: "yarn", Factor: factor(4)}},
		"ntk":         {Scheme: "rope", Scaling: &Scaling{Type: "ntk", Factor: factor(4)}},
		"linear":      {Scheme: "rope", Scaling: &Scaling{Type: "linear", Factor: factor(2)}},
		"dynamic_ntk": {Scheme: "rope", Scaling: &Scaling{Type: "dynamic_ntk", Factor: Factor{Auto: true}}},
		"p-rope":      {Scheme: "rope", Params: map[string]any{"frequency_fraction": 0.5}},
	}
	for name, c := range configs {
		s, err := New(Spec{DModel: 8, Heads: 1, TrainLen: 16, Config: c})
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.(Rotator).Rotation(64)
		if err != nil {
			t.Fatal(err)
		}
		score := func(i, j int) float64 { return dot(r.Apply(q, i), r.Apply(k, j)) }
		if a, b := score(5, 2), score(13, 10); math.Abs(a-b) > 1e-12 {
			t.Errorf("%s: score at (5,2) %.15g, at (13,10) %.15g", name, a, b)
		}
		for dist := 0; dist < 20; dist++ {
			ref := score(dist, 0)
			for i := dist; i < 64; i += 7 {
				if got := score(i, i-dist); math.Abs(got-ref) > 1e-11 {
					t.Fatalf("%s: distance %d: score at (%d,%d) %.15g, at (%d,0) %.15g", name, dist, i, i-dist, got, dist, ref)
				}
			}
		}
		// And it does depend on the distance, or the test above could not fail.
		if math.Abs(score(3, 0)-score(0, 0)) < 1e-6 {
			t.Errorf("%s: the score does not change with distance", name)
		}
	}
}

func TestAttentionFactorScalesScores(t *testing.T) {
	s, _ := New(Spec{DModel: 8, Heads: 1, TrainLen: 16, Config: Config{Scheme: "rope", Scaling: &Scaling{Type: "yarn", Factor: factor(4)}}})
	r, _ := s.(Rotator).Rotation(4)
	x := []float64{1, 0, 0, 0, 0, 0, 0, 0}
	y := r.Apply(x, 0) // position 0: no turn, only the factor
	want := 0.1*math.Log(4) + 1
	if got := dot(y, y); math.Abs(got-want*want) > 1e-12 {
		t.Fatalf("|R x|² = %g, want the factor squared %g", got, want*want)
	}
}

func TestALiBiSlopes(t *testing.T) {
	want := map[int][]float64{
		1:  {0.00390625},
		6:  {0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125},
		8:  {0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625},
		12: {0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625, 0.707106781187, 0.353553390593, 0.176776695297, 0.0883883476483},
		16: {0.707106781187, 0.5, 0.353553390593, 0.25, 0.176776695297, 0.125, 0.0883883476483, 0.0625, 0.0441941738242, 0.03125, 0.0220970869121, 0.015625, 0.011048543456, 0.0078125, 0.00552427172802, 0.00390625},
	}
	for h, w := range want {
		near(t, "slopes", Slopes(h), w)
	}
}

func TestALiBiBias(t *testing.T) {
	s, err := New(Spec{DModel: 12, Heads: 6, TrainLen: 8, Config: Config{Scheme: "alibi"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.(Biaser).Bias(5)
	if err != nil {
		t.Fatal(err)
	}
	// Head 4 has slope 0.5: a key 3 back costs 1.5.
	near(t, "head 4", b.Values[4*5:5*5], []float64{0, -0.5, -1, -1.5, -2})
	if _, ok := s.(Embedder); ok {
		t.Fatal("ALiBi adds no position embedding")
	}
}

func TestSinusoidalTable(t *testing.T) {
	s, err := New(Spec{DModel: 6, Heads: 1, TrainLen: 3, Config: Config{Scheme: "sinusoidal"}})
	if err != nil {
		t.Fatal(err)
	}
	tab, err := s.(Embedder).Embedding(3)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "table", tab.Values, []float64{
		0, 1, 0, 1, 0, 1,
		0.841470984808, 0.540302305868, 0.0463992234647, 0.998922976041, 0.00215443302337, 0.999997679206,
		0.909297426826, -0.416146836547, 0.0926985007787, 0.995694224124, 0.00430885604674, 0.999990716837,
	})
	if _, ok := s.(Learner); ok {
		t.Fatal("the sinusoidal table is fixed")
	}
	// Any length works.
	if long, err := s.(Embedder).Embedding(10000); err != nil || long.Rows != 10000 {
		t.Fatalf("10000 positions: %v", err)
	}
}

func TestLearnedNotApplicablePastMaxLen(t *testing.T) {
	s, err := New(Spec{DModel: 8, Heads: 2, TrainLen: 16, Config: Config{Scheme: "learned"}})
	if err != nil {
		t.Fatal(err)
	}
	l := s.(LearnedEmbedder)
	w := [][]float64{make([]float64, 16*8)}
	if tab, err := l.LearnedEmbedding(w, 16); err != nil || tab.Rows != 16 {
		t.Fatalf("at max_len: %+v, %v", tab, err)
	}
	if _, err := l.LearnedEmbedding(w, 17); !errors.Is(err, ErrNotApplicable) {
		t.Fatalf("past max_len: %v, want ErrNotApplicable", err)
	}
}

func TestBadConfigs(t *testing.T) {
	yarn := func(f, s float64) *Scaling {
		return &Scaling{Type: "yarn", Factor: factor(4), Params: map[string]any{"beta_fast": f, "beta_slow": s}}
	}
	cases := []struct {
		spec Spec
		want string
	}{
		{Spec{DModel: 8, Heads: 2, TrainLen: 8, Config: Config{Scheme: "alibi", Scaling: &Scaling{Type: "ntk", Factor: factor(2)}}}, "position.scaling"},
		{Spec{DModel: 8, Heads: 2, TrainLen: 8, Config: Config{Scheme: "sinusoidal", Params: map[string]any{"base": 500}}}, "position.base"},
		{Spec{DModel: 8, Heads: 2, TrainLen: 8, Config: Config{Scheme: "rope", Scaling: &Scaling{Type: "ntk", Factor: factor(0.5)}}}, "position.scaling.factor"},
		{Spec{DModel: 8, Heads: 2, TrainLen: 8, Config: Config{Scheme: "rope", Scaling: yarn(1, 32)}}, "position.scaling.beta_fast"},
		{Spec{DModel: 8, Heads: 2, TrainLen: 8, Config: Config{Scheme: "rope", Scaling: yarn(8, 8)}}, "position.scaling.beta_fast"},
		{Spec{DModel: 8, Heads: 2, TrainLen: 8, Config: Config{Scheme: "rope", Scaling: &Scaling{Type: "longrope", Factor: factor(2)}}}, "position.scaling.type"},
		{Spec{DModel: 8, Heads: 2, TrainLen: 8, Config: Config{Scheme: "rope", Scaling: &Scaling{Type: "ntk", Factor: factor(2), Params: map[string]any{"beta_fast": 3}}}}, "position.scaling"},
		{Spec{DModel: 12, Heads: 4, TrainLen: 8, Config: Config{Scheme: "rope"}}, "even head dimension"},
		{Spec{DModel: 8, Heads: 2, TrainLen: 8, Config: Config{Scheme: "rope", Params: map[string]any{"pairing": "diagonal"}}}, "position.pairing"},
		{Spec{DModel: 8, Heads: 2, TrainLen: 8, Config: Config{Scheme: "rope", Params: map[string]any{"base": 0.5}}}, "position.base"},
		{Spec{DModel: 8, Heads: 2, TrainLen: 8, Config: Config{Scheme: "learned", Params: map[string]any{"max_len": 4}}}, "position.max_len"},
		{Spec{DModel: 8, Heads: 2, TrainLen: 8, Config: Config{Scheme: "nonesuch"}}, "position.scheme"},
		{Spec{DModel: 8, Heads: 2, TrainLen: 8, Config: Config{Scheme: "t5", Params: map[string]any{"buckets": "many"}}}, "position.buckets"},
		{Spec{DModel: 8, Heads: 2, TrainLen: 8, Config: Config{Scheme: "t5", Params: map[string]any{"max_distance": 4, "buckets": 32}}}, "position.max_distance"},
		{Spec{DModel: 8, Heads: 2, TrainLen: 8, Config: Config{Scheme: "kerple", Params: map[string]any{"r1": 1}}}, "position.r1"},
		{Spec{DModel: 8, Heads: 2, TrainLen: 8, Config: Config{Scheme: "fire", Params: map[string]any{"hidden": 0}}}, "position.hidden"},
	}
	for _, c := range cases {
		_, err := New(c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: error %v, want one line naming %s", c.spec.Config, err, c.want)
		}
	}
}

func TestRegisterTwicePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("registering rope twice did not panic")
		}
	}()
	Register("rope", newRoPE)
}
