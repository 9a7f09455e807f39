// Command bench measures training and evaluation speed on the model of PyTorch's reference
// script (bench/torch_ref.py): the same shapes, the same corpus and batches, the same initial
// weights and Adam, so the two can be compared side by side. It prints one JSON object.
//
//	go run ./cmd/bench -config A                 # ms/step, tokens/s, GFLOP/s, allocations, memory
//	go run ./cmd/bench -config A -eval 16        # evaluation at 16x the training length
//	go run ./cmd/bench -config B -torch -rounds 5  # alternate with PyTorch, report the median ratio
//	go run ./cmd/bench -config B -concurrent 1,2,3 -torch  # 1, 2, 3 copies at once: aggregate tokens/s
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"gorgonia.org/tensor"

	"extrapolate/data"
	"extrapolate/internal/exit"
	"extrapolate/internal/gemm"
	"extrapolate/model"
	"extrapolate/model/nn"
	_ "extrapolate/plugins" // schemes, tasks and measures from outside, in every command
	"extrapolate/position"
)

// shapes are one config's sizes: the model's, a sequence's and a batch's.
type shapes struct{ vocab, dModel, layers, heads, seqLen, batch int }

// The configs of torch_ref.py: flags, help and errors list them from here.
var configs = map[string]shapes{
	"A":    {96, 64, 2, 4, 64, 16},
	"B":    {96, 128, 4, 4, 128, 16},
	"C":    {96, 256, 4, 8, 256, 8},
	"tiny": {96, 16, 1, 2, 8, 2},
}

// configNames lists the configs, sorted: "A, B, C or tiny".
func configNames() string {
	names := make([]string, 0, len(configs))
	for n := range configs {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Result is what one measurement found.
type Result struct {
	Impl     string   `json:"impl"`
	BLAS     string   `json:"blas"`
	BLASLibs []string `json:"blas_libs,omitempty"` // mapped BLAS libraries: OpenBLAS's with -tags openblas
	Kernel   string   `json:"kernel,omitempty"`    // package gemm's micro-kernel, with BLAS go-asm
	Go       string   `json:"go"`
	Config   string   `json:"config"`
	Mode     string   `json:"mode"` // train or eval
	// EvalFactor is, in eval mode, the evaluation length as a multiple of the training length.
	EvalFactor   int     `json:"eval_factor,omitempty"`
	Scheme       string  `json:"scheme"`
	StockOps     bool    `json:"stock_ops"`
	Warmup       int     `json:"warmup"`
	Batch        int     `json:"batch"`
	SeqLen       int     `json:"seq_len"`
	Params       int     `json:"params"`
	Steps        int     `json:"timed_steps"`
	BuildMS      float64 `json:"build_ms"`
	LossFirst    float64 `json:"loss_first"`
	LossLast     float64 `json:"loss_last"`
	StepMSMedian float64 `json:"step_ms_median"`
	StepMSMin    float64 `json:"step_ms_min"`
	TokensPerS   float64 `json:"tokens_per_s"`
	GFLOPS       float64 `json:"gflops_per_s"`
	AllocsStep   float64 `json:"allocs_per_step"`
	BytesStep    float64 `json:"alloc_bytes_per_step"`
	PeakRSSMB    float64 `json:"peak_rss_MB"`
	// EvalSeconds65536 is, in eval mode, the time to score 65,536 tokens.
	EvalSeconds65536 float64 `json:"eval_seconds_per_65536_tokens,omitempty"`
	// OpsMS is, with -ops, the ms a timed step spends in each fused op's forward and backward
	// pass, the optimizer's update, filling the batch, and the rest.
	OpsMS map[string]float64 `json:"ops_ms_per_step,omitempty"`
}

func main() { os.Exit(run()) }

// run measures as the flags ask and returns the exit status: 2 for bad flags, 1 for a failed
// measurement, 130 when interrupted, having printed nothing.
func run() int {
	ex := exit.New("bench", os.Stderr)
	ctx, stop := ex.Signals("stopping: nothing will be printed")
	defer stop()
	var (
		cfgName = flag.String("config", "A", configNames()+": the shapes of torch_ref.py's configs")
		steps   = flag.Int("steps", 200, "training steps (or evaluation batches)")
		warmup  = flag.Int("warmup", 5, "steps excluded from timing")
		stock   = flag.Bool("stock-ops", false, "build the model from gorgonia's stock ops (the baseline before the fused ops)")
		eval    = flag.Int("eval", 0, "measure evaluation at this multiple of the training length instead of training")
		torch   = flag.Bool("torch", false, "alternate with PyTorch's torch_ref.py and report the median ratio of tokens/s (training, learned positions: what torch_ref.py measures)")
		rounds  = flag.Int("rounds", 5, "with -torch, rounds of both programs")
		python  = flag.String("python", "/usr/bin/python3", "with -torch, the Python that has torch")
		script  = flag.String("script", filepath.Join("bench", "torch_ref.py"), "with -torch, the reference script")
		scheme  = flag.String("scheme", "", "position scheme (default: learned for training, as torch_ref.py has; rope with -eval)")
		copies  = flag.String("concurrent", "", "run this many copies at once, each count in turn (1,2,3), and print their aggregate tokens/s; with -torch, PyTorch's too")
		seqLen  = flag.Int("seq-len", 0, "train at this many tokens a sequence instead of the config's, the batch shrunk to keep the tokens of a step (at least one sequence): the cost of a longer training length")
		ops     = flag.Bool("ops", false, "time each fused op's forward and backward pass, the optimizer's update and the rest of a step, and print them to stderr (ours alone)")
	)
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: bench [-config A|B|C|tiny] [-scheme NAME] [-steps N] [-eval K] [-torch [-rounds R]] [-concurrent 1,2,...]\n\n")
		flag.PrintDefaults()
	}
	if err := ex.Parse(flag.CommandLine, os.Args[1:]); err != nil {
		return ex.Bad(err)
	}
	c, ok := configs[*cfgName]
	if !ok {
		return ex.Bad(fmt.Errorf("-config: %q, want %s", *cfgName, configNames()))
	}
	if *seqLen != 0 {
		if *seqLen < 1 || *seqLen > maxEvalLen || *torch {
			return ex.Bad(fmt.Errorf("-seq-len: %d, want 1 to %d, and not with -torch (torch_ref.py's configs fix theirs)", *seqLen, maxEvalLen))
		}
		c.batch, c.seqLen = max(1, c.batch*c.seqLen / *seqLen), *seqLen
	}
	if err := checkFlags(c.seqLen, *steps, *warmup, *eval, *rounds); err != nil {
		return ex.Bad(err)
	}
	s, err := benchScheme(c, *eval, *scheme)
	if err != nil {
		return ex.Bad(err)
	}
	if *ops && (*torch || *copies != "" || *stock) {
		return ex.Bad(errors.New("-ops: not with -torch, -concurrent or -stock-ops: it times our fused ops in this process"))
	}
	if *torch {
		if err := checkTorch(*eval, s.Name(), *python, *script); err != nil {
			return ex.Bad(err)
		}
	}
	var ks []int
	if *copies != "" {
		if ks, err = parseCopies(*copies); err != nil {
			return ex.Bad(err)
		}
	}
	if *copies != "" {
		self, err := os.Executable()
		if err != nil {
			return ex.Fail(err)
		}
		// Each copy measures what this command would alone: the same flags but these two.
		args := []string{"-config", *cfgName, "-steps", fmt.Sprint(*steps), "-warmup", fmt.Sprint(*warmup), "-stock-ops=" + fmt.Sprint(*stock), "-eval", fmt.Sprint(*eval)}
		if *scheme != "" {
			args = append(args, "-scheme", *scheme)
		}
		sides := []side{{"go", func(ctx context.Context) *exec.Cmd { return exec.CommandContext(ctx, self, args...) }}}
		if *torch {
			sides = append(sides, side{"torch", func(ctx context.Context) *exec.Cmd {
				return exec.CommandContext(ctx, *python, *script, "--config", *cfgName, "--steps", fmt.Sprint(*steps), "--warmup", fmt.Sprint(*warmup), "--quiet")
			}})
		}
		return contention(ctx, ex, *cfgName, ks, *rounds, sides)
	}
	if *torch {
		return compareTorch(ctx, ex, *cfgName, *rounds, *steps, *warmup, *stock, *python, *script)
	}
	res, err := measure(ctx, *cfgName, c, *steps, *warmup, *stock, *eval, s, *ops)
	if err != nil {
		return ex.Fail(err)
	}
	if res.OpsMS != nil {
		writeOps(os.Stderr, res.OpsMS)
	}
	return printJSON(ex, res)
}

// printJSON prints v, the measurement, as one line of JSON: the command's output, printed
// whole or, after a signal, not at all.
func printJSON(ex *exit.Command, v any) int {
	b, _ := json.Marshal(v)
	if err := ex.Write(func() error { _, err := fmt.Println(string(b)); return err }); err != nil {
		return ex.Fail(err)
	}
	return 0
}

// interrupted is err, or, once ctx is done, an interruption: a copy the signal stopped fails,
// and that is no failure of the measurement.
func interrupted(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%v); nothing printed", exit.ErrInterrupted, err)
	}
	return err
}

// maxEvalLen bounds the evaluation length, as cmd/inspect's -eval-len: far past what the
// benchmark is for, and the corpus must hold a window of it.
const maxEvalLen = 1 << 16

// checkFlags refuses flags that make no measurement, each by its name.
func checkFlags(seqLen, steps, warmup, eval, rounds int) error {
	switch {
	case warmup < 0:
		return fmt.Errorf("-warmup: %d, want 0 or more", warmup)
	case steps <= 0:
		return fmt.Errorf("-steps: %d, want a positive number", steps)
	case steps <= warmup:
		return fmt.Errorf("-steps: %d, want more than the %d of -warmup, so some steps are timed", steps, warmup)
	case eval < 0 || eval > maxEvalLen/seqLen:
		return fmt.Errorf("-eval: %d, want 0 (measure training) or a multiple of the training length %d from 1 to %d", eval, seqLen, maxEvalLen/seqLen)
	case rounds < 1:
		return fmt.Errorf("-rounds: %d, want a positive number", rounds)
	}
	return nil
}

// benchScheme builds the position scheme to measure: -scheme, or by default learned positions
// for training, as torch_ref.py has, and RoPE for evaluation, since learned positions stop at
// the training length. A scheme that cannot take the length measured is refused by -scheme.
func benchScheme(c shapes, evalMult int, scheme string) (position.Scheme, error) {
	name, n := scheme, c.seqLen
	if evalMult > 0 {
		n = c.seqLen * evalMult
	}
	if name == "" {
		name = "learned"
		if evalMult > 0 {
			name = "rope"
		}
	}
	s, err := position.New(position.Spec{DModel: c.dModel, Heads: c.heads, Layers: c.layers, TrainLen: c.seqLen, Config: position.Config{Scheme: name}})
	if err != nil {
		return nil, fmt.Errorf("-scheme %s: %v", name, err)
	}
	if err := position.Check(s, n); err != nil {
		return nil, fmt.Errorf("-scheme %s: cannot be measured at %d positions (-eval %d): %v", name, n, evalMult, err)
	}
	return s, nil
}

// checkTorch refuses what torch_ref.py cannot mirror, so that a ratio compares like with like:
// it trains only, with learned absolute positions. And the Python must be there.
func checkTorch(evalMult int, scheme, python, script string) error {
	if evalMult > 0 {
		return fmt.Errorf("-eval %d: not with -torch: torch_ref.py measures training only", evalMult)
	}
	if scheme != "learned" {
		return fmt.Errorf("-scheme %s: not with -torch: torch_ref.py has learned positions only", scheme)
	}
	if _, err := exec.LookPath(python); err != nil {
		return fmt.Errorf("-python %s: not an executable file", python)
	}
	if st, err := os.Stat(script); err != nil || st.IsDir() {
		return fmt.Errorf("-script %s: no such file", script)
	}
	return nil
}

// torchCorpus is torch_ref.py's corpus: the .go files under Go's src/strings, src/bytes and
// src/sort, sorted by path, bytes mapped to its 96 symbols.
func torchCorpus() ([]byte, error) {
	root, _ := data.GoRoot()
	var files []string
	for _, d := range []string{"strings", "bytes", "sort"} {
		err := filepath.WalkDir(filepath.Join(root, "src", d), func(p string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() && filepath.Ext(p) == ".go" {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(files)
	var out []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, x := range b {
			switch {
			case x == '\n':
				out = append(out, 0)
			case x == '\t':
				out = append(out, 1)
			case x >= 32 && x <= 125:
				out = append(out, x-30)
			default:
				out = append(out, '?'-30)
			}
		}
	}
	return out, nil
}

// measure builds the model of config name with scheme s and times steps training steps (or,
// with evalMult, forward passes at evalMult times the training length), the first warmup of
// them untimed; with ops, it times the parts of each timed step too (opTimes).
func measure(ctx context.Context, name string, c shapes, steps, warmup int, stock bool, evalMult int, s position.Scheme, ops bool) (*Result, error) {
	corpus, err := torchCorpus()
	if err != nil {
		return nil, err
	}
	const seed = 1234
	mc := model.Config{DModel: c.dModel, Layers: c.layers, Heads: c.heads, Vocab: c.vocab}
	start := time.Now()
	res := newResult(name, c, warmup, stock, evalMult, s)
	n, batch := res.SeqLen, res.Batch
	m, err := model.New(mc, s, tensor.Float32, seed)
	if err != nil {
		return nil, err
	}
	g, err := m.Graph(s, batch, n, model.Options{Train: evalMult == 0, StockOps: stock})
	if err != nil {
		return nil, err
	}
	// torch.optim.Adam(lr=1e-3, betas=(0.9, 0.999), eps=1e-8): no decay, no clipping.
	opt := model.NewAdamW(m, model.Schedule{LR: 1e-3, MinLR: 1e-3, Steps: 1}, 0, 0)
	opt.Beta2 = 0.999
	b := &bench{m: m, g: g, opt: opt, sampler: data.NewSampler(corpus, seed+1), grads: make([]*tensor.Dense, len(m.Params)), n: n, train: evalMult == 0}
	if ops {
		b.ops = opTimes{}
	}
	res.BuildMS = float64(time.Since(start).Microseconds()) / 1e3
	res.Params = m.NumParams()
	times, err := b.run(ctx, res, steps, warmup)
	if err != nil {
		return nil, err
	}
	res.summarize(times, c, evalMult)
	return res, nil
}

// newResult is the result's description of what is measured, before any measurement: the
// setting, and in eval mode the longer sequences in proportionally smaller batches.
func newResult(name string, c shapes, warmup int, stock bool, evalMult int, s position.Scheme) *Result {
	res := &Result{Impl: "gorgonia-fused", BLAS: nn.BLAS, Go: runtime.Version(), Config: name, Mode: "train", Batch: c.batch, SeqLen: c.seqLen,
		Scheme: s.Name(), StockOps: stock, Warmup: warmup}
	if stock {
		res.Impl = "gorgonia-stock-ops"
		if nn.BLAS != "openblas" {
			res.BLAS = "gonum" // gorgonia's own products
		}
	}
	if res.BLAS == "go-asm" {
		res.Kernel = gemm.Kernel()
	}
	if evalMult > 0 {
		n, batch := c.seqLen*evalMult, max(1, c.batch/evalMult)
		res.Mode, res.EvalFactor, res.SeqLen, res.Batch = "eval", evalMult, n, batch
	}
	return res
}

// bench is what a measured step runs: the model's graph on a batch of n tokens a sequence,
// and when training, the optimizer's update.
type bench struct {
	m       *model.Model
	g       *model.Graph
	opt     *model.AdamW
	sampler *data.Sampler
	grads   []*tensor.Dense
	n       int
	train   bool
	ops     opTimes // nil unless the parts of a step are timed
}

// run runs steps steps and returns the times of those after the first warmup, in ms. It records
// the first and last loss, and the allocations of the timed steps, in res. It stops before the
// next step once ctx is done.
func (b *bench) run(ctx context.Context, res *Result, steps, warmup int) ([]float64, error) {
	var times []float64
	var before, after runtime.MemStats
	var timed time.Duration
	defer b.ops.stop()
	for step := 0; step < steps; step++ {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w at step %d of %d; nothing printed", exit.ErrInterrupted, step, steps)
		}
		if step == warmup {
			runtime.GC()
			runtime.ReadMemStats(&before)
			if b.ops != nil {
				b.ops.start()
			}
		}
		t0 := time.Now()
		loss, err := b.step(step >= warmup)
		if err != nil {
			return nil, err
		}
		if step >= warmup {
			d := time.Since(t0)
			timed += d
			times = append(times, float64(d.Microseconds())/1e3)
		}
		if step == 0 {
			res.LossFirst = loss
		}
		res.LossLast = loss
	}
	runtime.ReadMemStats(&after)
	res.Steps = len(times)
	res.AllocsStep = float64(after.Mallocs-before.Mallocs) / float64(len(times))
	res.BytesStep = float64(after.TotalAlloc-before.TotalAlloc) / float64(len(times))
	if b.ops != nil {
		res.OpsMS = b.ops.perStep(len(times), timed)
	}
	return times, nil
}

// step fills a batch, runs the graph and, when training, updates the weights. A timed step adds
// the batch's and the update's time to b.ops, when the parts of a step are timed.
func (b *bench) step(timed bool) (float64, error) {
	t0 := time.Now()
	if err := b.sampler.Fill(b.g.IDs, b.g.Targets, b.n); err != nil {
		return 0, err
	}
	b.ops.add(timed, opsBatch, t0)
	loss, err := b.g.Run()
	if err != nil {
		return 0, err
	}
	if b.train {
		for i := range b.grads {
			b.grads[i] = b.g.Grad(i)
		}
		t0 = time.Now()
		if _, err := b.opt.Update(b.m.Params, b.grads); err != nil {
			return 0, err
		}
		b.ops.add(timed, opsAdamW, t0)
	}
	return loss, nil
}

// summarize turns the timed steps' times, in ms, into the speeds res reports, with the peak
// memory and the BLAS libraries mapped.
func (res *Result) summarize(times []float64, c shapes, evalMult int) {
	slices.Sort(times)
	res.StepMSMedian, res.StepMSMin = times[len(times)/2], times[0]
	n, batch := res.SeqLen, res.Batch
	tokens := float64(batch * n)
	res.TokensPerS = tokens / (res.StepMSMedian / 1e3)
	flops := flopsPerStep(c.vocab, c.dModel, c.layers, n, batch)
	if evalMult > 0 {
		flops /= 3 // forward only
		res.EvalSeconds65536 = 65536 / res.TokensPerS
	}
	res.GFLOPS = flops / (res.StepMSMedian / 1e3) / 1e9
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		res.PeakRSSMB = float64(ru.Maxrss) / 1024
	}
	res.BLASLibs = selfBLAS()
}

// flopsPerStep counts dense matrix-product FLOPs of a training step as torch_ref.py does:
// forward and backward are three times the forward, full T×T attention matrices included.
func flopsPerStep(v, d, l, t, b int) float64 {
	tok := float64(b * t)
	nMatmul := float64(l*12*d*d + d*v)
	attn := float64(l) * 2 * 2 * float64(b) * float64(t) * float64(t) * float64(d)
	return 6*nMatmul*tok + 3*attn
}

// compareTorch runs this command and torch_ref.py in turn, rounds times, each in a fresh
// process, and prints both sides' medians, the BLAS each ran on, and the ratio of tokens/s. It
// stops after PyTorch's first round when that ran on the reference BLAS. Both sides train
// (checkTorch refuses the rest), with the same steps and warmup.
func compareTorch(ctx context.Context, ex *exit.Command, cfg string, rounds, steps, warmup int, stock bool, python, script string) int {
	self, err := os.Executable()
	if err != nil {
		return ex.Fail(err)
	}
	var ours, theirs []map[string]any
	var torchKind string
	for r := 0; r < rounds; r++ {
		for _, side := range []string{"go", "torch"} {
			var cmd *exec.Cmd
			if side == "go" {
				cmd = exec.CommandContext(ctx, self, "-config", cfg, "-steps", fmt.Sprint(steps), "-warmup", fmt.Sprint(warmup), "-stock-ops="+fmt.Sprint(stock))
			} else {
				cmd = exec.CommandContext(ctx, python, script, "--config", cfg, "--steps", fmt.Sprint(steps), "--warmup", fmt.Sprint(warmup), "--quiet")
			}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, os.Stderr
			if err := cmd.Run(); err != nil {
				return ex.Fail(interrupted(ctx, fmt.Errorf("%s: %w", side, err)))
			}
			var m map[string]any
			if err := json.Unmarshal(out.Bytes(), &m); err != nil {
				return ex.Fail(fmt.Errorf("%s printed %q: %w", side, out.String(), err))
			}
			if side == "go" {
				ours = append(ours, m)
			} else {
				theirs = append(theirs, m)
				if torchKind, err = torchBLAS(stringsOf(m["blas_libs"]), str(m["blas_build"])); err != nil {
					return ex.Fail(err)
				}
			}
			fmt.Fprintf(os.Stderr, "round %d %s: %.0f tokens/s, %.1f ms/step, peak %.0f MB\n", r+1, side, m["tokens_per_s"], m["step_ms_median"], m["peak_rss_MB"])
		}
	}
	med := func(rs []map[string]any, key string) float64 {
		var x []float64
		for _, r := range rs {
			if v, ok := r[key].(float64); ok {
				x = append(x, v)
			}
		}
		if len(x) == 0 {
			return math.NaN()
		}
		slices.Sort(x)
		return x[len(x)/2]
	}
	if torchKind == "unknown" {
		fmt.Fprintf(os.Stderr, "bench: %s reported no BLAS library or build: the ratio may be against a slow BLAS\n", script)
	}
	if k, core := str(ours[0]["kernel"]), str(theirs[0]["blas_core"]); k != "" && core != "" {
		fmt.Fprintf(os.Stderr, "kernels: ours %s, OpenBLAS %s\n", k, core)
	}
	summary := map[string]any{
		"config": cfg, "rounds": rounds, "steps": steps, "warmup": warmup,
		// What was measured, as the Go side reported it: torch_ref.py trains with learned
		// positions, and so did the Go side (checkTorch).
		"mode": ours[0]["mode"], "scheme": ours[0]["scheme"], "stock_ops": ours[0]["stock_ops"], "go_impl": ours[0]["impl"],
		"go_blas": nn.BLAS, "go_blas_libs": ours[0]["blas_libs"], "go_kernel": ours[0]["kernel"],
		"torch_blas": torchKind, "torch_blas_libs": theirs[0]["blas_libs"], "torch_blas_build": theirs[0]["blas_build"],
		// The kernels OpenBLAS chose for this CPU (SkylakeX's AVX-512, Haswell's AVX2, ...):
		// ours with GODEBUG=cpu.avx512f=off against OpenBLAS's AVX-512 is not AVX2 against AVX2.
		"torch_blas_core": theirs[0]["blas_core"],
		"go_tokens_per_s": med(ours, "tokens_per_s"), "torch_tokens_per_s": med(theirs, "tokens_per_s"),
		"go_step_ms": med(ours, "step_ms_median"), "torch_step_ms": med(theirs, "step_ms_median"),
		"go_peak_rss_MB": med(ours, "peak_rss_MB"), "torch_peak_rss_MB": med(theirs, "peak_rss_MB"),
		"go_loss_first": med(ours, "loss_first"), "torch_loss_first": med(theirs, "loss_first"),
		"go_loss_last": med(ours, "loss_last"), "torch_loss_last": med(theirs, "loss_last"),
	}
	summary["ratio_tokens_per_s"] = summary["go_tokens_per_s"].(float64) / summary["torch_tokens_per_s"].(float64)
	return printJSON(ex, summary)
}

// stringsOf returns the strings of a decoded JSON array, or nil for anything else.
func stringsOf(v any) []string {
	a, _ := v.([]any)
	var out []string
	for _, x := range a {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// str returns a decoded JSON string, or "" for anything else.
func str(v any) string {
	s, _ := v.(string)
	return s
}
