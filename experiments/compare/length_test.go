package compare

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"extrapolate/experiments/config"
	"extrapolate/position"
)

// lengthGrid is a grid of two points at training lengths 16 and 32, each scored at 1x, 2x, 4x
// and 16x of its own, on the same 512 tokens.
const lengthGrid = `grid:
  - {name: L16}
  - {name: L32, set: {train.seq_len: 32, train.batch_size: 2, eval.lengths: [32, 64, 128, 512], eval.batch_tokens: 512}}
`

// TestLengthGrid runs a grid whose points train at different lengths: each point's claims are
// judged at multiples of its own training length, and the grid's report has the verdicts by
// training length, their CSV and a figure per claim.
func TestLengthGrid(t *testing.T) {
	dir := t.TempDir()
	plan, err := LoadPlan(gridFiles(t, dir, lengthGrid), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "results")
	rep, err := (&Runner{Plan: plan, Dir: out, Command: "test"}).Execute(context.Background())
	if err != nil || rep == nil {
		t.Fatalf("the grid: %v, report %v", err, rep)
	}
	long := rep.Points[1]
	if long.Report.TrainLen != 32 || long.TrainTokens != rep.Points[0].TrainTokens {
		t.Fatalf("the L32 point trains at %d on %d tokens, want 32 on the L16 point's %d", long.Report.TrainLen, long.TrainTokens, rep.Points[0].TrainTokens)
	}
	if r, ok := long.claimAt("alibi_flat"); !ok || r.Deciding == nil || !strings.Contains(r.Evidence, "at 16x") {
		t.Fatalf("alibi_flat at L32: %+v", r)
	}
	if st, ok := long.Report.Series[0].At(16 * 32); !ok || st.Seeds != 2 {
		t.Errorf("the L32 point's alibi at 16x its training length: %+v", st)
	}
	for _, f := range []string{LengthCSV, lengthFigure("alibi_flat", "png"), lengthFigure("alibi_flat", "svg"), scaleFigure("alibi_flat", "png")} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, ReportFile))
	for _, want := range []string{
		"trained at 16 and 32 tokens (each point at its own) and scored at 1x to 16x its training length",
		"## Verdicts by training length",
		"| claim | limit | points | trained at 16 | trained at 32 | holds at |",
		"| alibi_flat | ≤ 1.05 | d16 | ",
		"![alibi_flat](length_alibi_flat.png)",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("REPORT.md lacks %q:\n%s", want, md)
		}
	}
	f, _ := os.Open(filepath.Join(out, LengthCSV))
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// Per claim and point: the mean's row and one per seed.
	if len(rows) < 7 || strings.Join(rows[0], ",") != "claim,line,point,d_model,train_len,train_tokens,verdict,what,limit,at_least,seed,ratio" {
		t.Fatalf("%s: %q", LengthCSV, rows)
	}
	var lens []string
	for _, r := range rows[1:] {
		if r[0] == "alibi_flat" && r[10] == "mean" {
			lens = append(lens, r[2]+"@"+r[4])
		}
	}
	if strings.Join(lens, " ") != "L16@16 L32@32" {
		t.Errorf("alibi_flat's rows by point: %v", lens)
	}
}

// TestLengthGridRefusesOtherMultiples checks that points at different training lengths must be
// scored at the same multiples of them.
func TestLengthGridRefusesOtherMultiples(t *testing.T) {
	grid := strings.Replace(lengthGrid, "[32, 64, 128, 512]", "[32, 64, 128, 256]", 1)
	_, err := Load(gridFiles(t, t.TempDir(), grid), nil)
	if err == nil || !strings.Contains(err.Error(), "grid[1] (L32): train.seq_len 32 scores eval.lengths [32 64 128 256] at 1x, 2x, 4x, 8x its training length, not at the first point's 1x, 2x, 4x, 16x") {
		t.Fatalf("other multiples: %v", err)
	}
}

// TestLengthGridSchemesFollow checks that what a scheme takes from the training length is each
// point's own: T5's max_distance cap, the learned table, YaRN's original length, and the
// model's (the attention statistics' far keys, log-length scaling's base). Log-length scaling
// in training (logn_train) scales by log(i+1) alone, whatever the length.
func TestLengthGridSchemesFollow(t *testing.T) {
	dir := t.TempDir()
	path := gridFiles(t, dir, lengthGrid)
	comp, _ := os.ReadFile(path)
	comp = []byte(strings.Replace(string(comp), "runs:\n", `runs:
  - {config: base, label: learned, set: {position.scheme: learned}}
  - {config: base, label: yarn, set: {position.scheme: rope, position.scaling: {type: yarn, factor: auto}}}
  - {config: base, label: logn, set: {position.scheme: rope, attention.scale: logn}}
`, 1))
	if err := os.WriteFile(path, comp, 0o644); err != nil {
		t.Fatal(err)
	}
	plan, err := LoadPlan(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plan.Runs("out") {
		n := p.Config().Train.SeqLen
		if mc := p.Resolved.ModelConfig(); mc.TrainLen != n {
			t.Errorf("%s: the model's training length %d, want %d", p.ID(), mc.TrainLen, n)
		}
		checkSchemeFollows(t, p.ID(), p.Resolved, n)
	}
	// Other validation tokens are other text: refused, as between a point's runs.
	other := strings.Replace(string(comp), "eval.batch_tokens: 512}}", "eval.batch_tokens: 512, eval.tokens: 1024}}", 1)
	if err := os.WriteFile(path, []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPlan(path, nil); err == nil || !strings.Contains(err.Error(), "grid[1] (L32): eval.tokens 1024 differs") {
		t.Fatalf("a point scored on other tokens: %v", err)
	}
}

// checkSchemeFollows checks that a run's scheme took its training length n where it takes one.
func checkSchemeFollows(t *testing.T, id string, r *config.Resolved, n int) {
	t.Helper()
	s, _ := r.Schemes()
	switch s := s.(type) {
	case position.T5:
		if s.MaxDistance != max(min(128, n), s.Buckets/2+1) {
			t.Errorf("%s: T5's max_distance %d, want min(128, %d), above buckets/2", id, s.MaxDistance, n)
		}
	case position.Learned:
		if s.MaxLen != n {
			t.Errorf("%s: the learned table has %d rows, want %d", id, s.MaxLen, n)
		}
	case *position.RoPE:
		if s.TrainLen != n {
			t.Errorf("%s: RoPE's training length %d, want %d", id, s.TrainLen, n)
		}
	}
}
