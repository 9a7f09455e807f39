package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// taskComparison is a finished comparison of task runs over the base config: plain RoPE, and
// learned positions, whose table stops below copy's longer windows.
const taskComparison = `comparison: cmp
seeds: [1]
set: {task: {names: [copy], examples: 4}, train.seq_len: 38}
runs:
  - {config: config}
  - {config: config, label: learned, set: {position.scheme: learned}}
`

// TestReportRefusesDamagedTasks damages what a task run's results file keeps of its tasks, in
// every way below: the report must refuse it with exit 2 and one line saying what is wrong,
// and leave every file as it was.
func TestReportRefusesDamagedTasks(t *testing.T) {
	dir := setup(t, good)
	os.WriteFile(filepath.Join(dir, "cmp.yaml"), []byte(taskComparison), 0o644)
	if code, _, stderr := runTrain(t, dir, "-config", "./cmp.yaml", "-out", "done", "-quiet"); code != 0 {
		t.Fatalf("the comparison: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "done", "tasks_by_run.csv")); err != nil {
		t.Fatalf("the comparison wrote no task section: %v", err)
	}
	// The corpus's perplexity and loss by position of models trained on tasks are records, not
	// results: the report says where they are and shows no table of them.
	md, _ := os.ReadFile(filepath.Join(dir, "done", "REPORT.md"))
	for _, want := range []string{"## Perplexity (not a result)", "## Loss by position (not a result)", "## Tasks"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("REPORT.md lacks %q", want)
		}
	}
	if strings.Contains(string(md), "## Perplexity (mean") || strings.Contains(string(md), "| run | length | loss at") {
		t.Error("REPORT.md of task runs shows the corpus's perplexity or loss by position")
	}
	finished := snapshot(t, filepath.Join(dir, "done"))
	cells := func(edit func(cs []any) []any) editFunc {
		return jsonEdit(func(m map[string]any) { m["tasks"] = edit(m["tasks"].([]any)) })
	}
	results := filepath.Join("tiny-s1", "ppl_vs_len.json")
	for i, d := range []runDamage{
		{"tasks removed", results, jsonEdit(func(m map[string]any) { delete(m, "tasks") }), "ppl_vs_len.json: holds no task cells, but the run trains on tasks"},
		{"a size missing", results, cells(func(cs []any) []any { return cs[1:] }), "cell 1 is copy at size 16, want copy at size 8"},
		{"a cell too many", results, cells(func(cs []any) []any { return append(cs, cs[0]) }), "7 cells, want 6"},
		{"more exact than examples", results, cells(func(cs []any) []any { cs[0].(map[string]any)["exact"] = 5.0; return cs }), "copy at size 8: exact 5 of 4 examples"},
		{"exact match edited", results, cells(func(cs []any) []any { cs[0].(map[string]any)["exact_match"] = 0.99; return cs }), "they do not agree"},
		{"not applicable by hand", results, cells(func(cs []any) []any {
			cs[1].(map[string]any)["applicable"], cs[1].(map[string]any)["reason"] = false, "edited"
			return cs
		}), "copy at size 16: not applicable (\"edited\"), but the scheme takes a window of 38"},
		{"scored past the table", filepath.Join("learned-s1", "ppl_vs_len.json"), cells(func(cs []any) []any {
			c := cs[5].(map[string]any)
			c["applicable"], c["reason"], c["examples"], c["tokens"] = true, "", 4.0, 4.0
			return cs
		}), "copy at size 64: scored, but the scheme cannot take a window of 134"},
	} {
		t.Run(d.name, func(t *testing.T) {
			refusesDamage(t, dir, finished, fmt.Sprintf("damaged%d", i), d, [][]string{{"-report"}})
		})
	}
}
