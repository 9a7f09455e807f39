package compare

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"extrapolate/experiments/internal/testrun"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/measure/attention"
)

// TestAttentionInAComparison runs a tiny comparison with attention diagnostics: every run
// writes its files, and the report has the section, its files and a finding, with the mean
// over heads and seeds recomputed here from the runs' files.
func TestAttentionInAComparison(t *testing.T) {
	dir := t.TempDir()
	cfg := `name: base
data: {corpus: text, path: ` + testrun.Corpus(t) + `}
model: {d_model: 16, layers: 1, heads: 2}
position: {scheme: rope}
train: {seq_len: 16, batch_size: 4, steps: 20}
eval: {lengths: [16, 32, 64], tokens: 512, batch_tokens: 256, measures: [attention]}
`
	os.WriteFile(filepath.Join(dir, "base.yaml"), []byte(cfg), 0o644)
	comp := `comparison: tiny
seeds: [1, 2]
runs:
  - {config: base, label: rope}
  - {config: base, label: alibi, set: {position.scheme: alibi}}
  - {config: base, label: nope, set: {position.scheme: nope}}
`
	path := filepath.Join(dir, "tiny.yaml")
	os.WriteFile(path, []byte(comp), 0o644)
	c, err := LoadPlan(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "results")
	rep, err := (&Runner{Plan: c, Dir: out, Command: "test"}).Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{attention.ComparisonCSV, attention.ComparisonJSON, attention.EntropyPNG, attention.FarSVG,
		filepath.Join(RunsDir, "alibi-s2", attention.RunCSV)} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, ReportFile))
	if !strings.Contains(string(md), "## Attention") || !strings.Contains(string(md), "attention is flattest in") {
		t.Fatalf("REPORT.md has no attention section with its finding:\n%s", md)
	}
	// The report says on what processor its time was spent, as the runs record it.
	if cpu := rep.Runs[0].Result.CPU; cpu == "" || !strings.Contains(string(md), "of computation in all, on "+cpu+";") {
		t.Errorf("REPORT.md does not give the runs' processor %q with its time", cpu)
	}
	var f struct{ Series []attention.Series }
	b, _ := os.ReadFile(filepath.Join(out, attention.ComparisonJSON))
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	for _, sa := range f.Series {
		var perSeed []float64
		for _, r := range rep.Runs {
			if r.Label == sa.Label {
				perSeed = append(perSeed, lastBinOverHeads(t, r.Dir, sa.Length))
			}
		}
		mean, std := measure.MeanStd(perSeed)
		last := sa.All[len(sa.All)-1]
		if sa.Seeds != 2 || math.Abs(last.EntropyMean-mean) > 1e-12 || math.Abs(last.EntropyStd-std) > 1e-12 {
			t.Fatalf("%s at %d: last bin %+v over %d seeds, want entropy %v ± %v", sa.Label, sa.Length, last, sa.Seeds, mean, std)
		}
	}
}

// lastBinOverHeads is a run's entropy in the last bin at length n, averaged over its heads.
func lastBinOverHeads(t *testing.T, dir string, n int) float64 {
	t.Helper()
	var f struct{ Lengths []attention.Length }
	b, err := os.ReadFile(filepath.Join(dir, attention.RunJSON))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	for _, al := range f.Lengths {
		if al.Length == n {
			var sum float64
			for _, hd := range al.Heads {
				sum += hd.Bins[len(hd.Bins)-1].Entropy
			}
			return sum / float64(len(al.Heads))
		}
	}
	t.Fatalf("%s has no attention at %d", dir, n)
	return 0
}
