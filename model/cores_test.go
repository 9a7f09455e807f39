package model

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"extrapolate/internal/par"
	"extrapolate/model/nn"
	"extrapolate/position"
)

// coresChild, when set, makes TestSameOnAnyCoreCount print its fingerprints instead of
// starting processes.
const coresChild = "EXTRAPOLATE_CORES_CHILD"

// TestSameOnAnyCoreCount trains and evaluates in processes with GOMAXPROCS 1, 2, 3 and 5 (more
// workers than this machine may have cores, and an odd split) and requires the same weights
// and losses to the last bit: the work is split by the core count, the numbers must not be.
func TestSameOnAnyCoreCount(t *testing.T) {
	if os.Getenv(coresChild) != "" {
		fmt.Printf("workers %d\n", par.Workers())
		for _, sc := range []string{"learned", "rope", "t5", "kerple"} {
			fmt.Printf("%s %s\n", sc, fingerprint(t, sc))
		}
		return
	}
	var first string
	for _, procs := range []int{1, 2, 3, 5} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSameOnAnyCoreCount$", "-test.count=1")
		cmd.Env = append(os.Environ(), coresChild+"=1", fmt.Sprintf("GOMAXPROCS=%d", procs))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("GOMAXPROCS=%d: %v\n%s", procs, err, out)
		}
		lines := strings.SplitN(string(out), "\n", 2)
		if lines[0] != fmt.Sprintf("workers %d", procs) {
			t.Fatalf("GOMAXPROCS=%d: the child reports %q", procs, lines[0])
		}
		got := strings.TrimSuffix(strings.TrimSpace(lines[1]), "PASS")
		if first == "" {
			first = got
			continue
		}
		if got != first {
			t.Errorf("GOMAXPROCS=%d gives\n%s\nGOMAXPROCS=1 gives\n%s", procs, got, first)
		}
	}
}

// fingerprint trains a model big enough that every op splits its work (width 64, 64 tokens,
// batch 8) for five AdamW steps, evaluates it at twice the length, and hashes the weights, the
// moments and the losses.
func fingerprint(t *testing.T, scheme string) string {
	c := Config{DModel: 64, Layers: 2, Heads: 4, Vocab: 96}
	const n, batch = 64, 8
	s, err := position.New(position.Spec{DModel: c.DModel, Heads: c.Heads, Layers: c.Layers, TrainLen: n, Config: position.Config{Scheme: scheme}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(c, s, tensor.Float32, 7)
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.Graph(s, batch, n, Options{Train: true})
	if err != nil {
		t.Fatal(err)
	}
	opt := NewAdamW(m, Schedule{LR: 3e-3, MinLR: 3e-4, Warmup: 2, Steps: 5}, 0.1, 1)
	rng := rand.New(rand.NewPCG(3, 4))
	h := fnv.New64a()
	put := func(x float64) { fmt.Fprintf(h, "%x,", math.Float64bits(x)) }
	for step := 0; step < 5; step++ {
		copy(g.IDs, randomTokens(rng, len(g.IDs), c.Vocab))
		copy(g.Targets, randomTokens(rng, len(g.Targets), c.Vocab))
		loss, err := g.Run()
		if err != nil {
			t.Fatal(err)
		}
		put(loss)
		st, err := opt.Update(m.Params, grads(g, len(m.Params)))
		if err != nil {
			t.Fatal(err)
		}
		put(st.GradNorm)
	}
	for i, p := range m.Params {
		for _, ts := range []*tensor.Dense{p.Value, opt.M[i], opt.V[i]} {
			for _, v := range nn.Values[float32](ts) {
				put(float64(v))
			}
		}
	}
	if scheme != "learned" {
		e, err := m.Graph(s, 2, 2*n, Options{})
		if err != nil {
			t.Fatal(err)
		}
		copy(e.IDs, randomTokens(rng, len(e.IDs), c.Vocab))
		copy(e.Targets, randomTokens(rng, len(e.Targets), c.Vocab))
		loss, err := e.Run()
		if err != nil {
			t.Fatal(err)
		}
		put(loss)
	}
	return fmt.Sprintf("%016x", h.Sum64())
}
