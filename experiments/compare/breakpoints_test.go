package compare

import (
	"context"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"extrapolate/experiments/internal/testrun"
	"extrapolate/experiments/measure/positions"
)

// TestGridBreakpoints runs a small base study, plain RoPE at four bases on a grid of two
// training lengths, and checks the grid's table of predictions and breakpoints: a row per run,
// T_extra as Liu et al.'s closed form gives it (2π·β^(d_extra/d), d_extra = 2⌈(d/2)·log_β(L/2π)⌉,
// computed here), none for base 2, every pair of whose turns within both lengths, and Men et
// al.'s decay as B(m) = Σ cos(m·θ_i) says (computed here); the figure; and the base claims
// judged at each point.
func TestGridBreakpoints(t *testing.T) {
	dir := t.TempDir()
	cfg := `name: base
data: {corpus: text, path: ` + testrun.Corpus(t) + `}
model: {d_model: 16, layers: 1, heads: 2}
position: {scheme: rope, base: 10000}
train: {seq_len: 16, batch_size: 4, steps: 12}
eval: {lengths: [16, 32, 64, 256], tokens: 512, batch_tokens: 256}
`
	comp := `comparison: bases
seeds: [1]
runs:
  - {config: base, label: rope_b2, set: {position.base: 2}}
  - {config: base, label: rope_b10, set: {position.base: 10}}
  - {config: base, label: rope_b100, set: {position.base: 100}}
  - {config: base, label: rope_b10000}
grid:
  - {name: L16}
  - {name: L32, set: {train.seq_len: 32, train.batch_size: 2, eval.lengths: [32, 64, 128, 512], eval.batch_tokens: 512}}
`
	for name, text := range map[string]string{"base.yaml": cfg, "bases.yaml": comp} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := LoadPlan(filepath.Join(dir, "bases.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "results")
	rep, err := (&Runner{Plan: c, Dir: out, Command: "test"}).Execute(context.Background())
	if err != nil || rep == nil {
		t.Fatalf("%v, report %v", err, rep)
	}
	f, err := os.Open(filepath.Join(out, positions.GridCSV))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+8 {
		t.Fatalf("%d rows, want a header and 8 runs", len(rows))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	const d = 8 // head dimension: 16 wide, 2 heads
	for _, row := range rows[1:] {
		base, _ := strconv.ParseFloat(strings.TrimPrefix(row[col["label"]], "rope_b"), 64)
		trainLen, _ := strconv.Atoi(row[col["train_len"]])
		want := ""
		if x := float64(d) / 2 * math.Log(float64(trainLen)/(2*math.Pi)) / math.Log(base); x < d/2 {
			de := 2 * int(math.Ceil(x))
			want = strconv.FormatFloat(2*math.Pi*math.Pow(base, float64(de)/d), 'f', 1, 64)
		}
		got := row[col["t_extra"]]
		if v, err := strconv.ParseFloat(got, 64); err == nil {
			got = strconv.FormatFloat(v, 'f', 1, 64)
		}
		if got != want {
			t.Errorf("%s at %d: T_extra %q, want %q", row[col["label"]], trainLen, got, want)
		}
		holds := true
		for m := 0; m <= trainLen; m++ {
			var b float64
			for i := 0; i < d/2; i++ {
				b += math.Cos(float64(m) * math.Pow(base, -float64(2*i)/d))
			}
			holds = holds && b >= 0
		}
		if row[col["decay_holds"]] != strconv.FormatBool(holds) {
			t.Errorf("%s at %d: decay_holds %s, want %v", row[col["label"]], trainLen, row[col["decay_holds"]], holds)
		}
	}
	if _, err := os.Stat(filepath.Join(out, positions.GridPNG)); err != nil {
		t.Error(err)
	}
	md, _ := os.ReadFile(filepath.Join(out, ReportFile))
	for _, want := range []string{"## Where RoPE breaks: predicted and measured", "| L32 | rope_b2 | none |", "breakpoint_follows_critical", "small_base_extrapolates"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("REPORT.md lacks %q", want)
		}
	}
}
