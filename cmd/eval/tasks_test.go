package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"extrapolate/experiments/config"
	"extrapolate/experiments/evaluate"
	"extrapolate/task"
)

// trainCopy makes a checkpoint of a tiny RoPE model trained on the copy task, scored on 20
// held-out examples a size.
func trainCopy(t *testing.T) string {
	t.Helper()
	return trainWith(t, "rope", func(c *config.Config) {
		c.Task = &task.Config{Names: []string{"copy"}, Examples: 20}
		c.Train.SeqLen, c.Eval.Lengths = 38, []int{32}
	})
}

// TestEvalTasks scores a task checkpoint under two scalings: exact match by size, the same
// held-out examples as its run, so that without a scaling every cell equals the one its run
// recorded; the files are written and the table names the task and both scalings.
func TestEvalTasks(t *testing.T) {
	ckpt := trainCopy(t)
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runEval(t, "-checkpoint", ckpt, "-scaling", "none,yarn", "-out", out, "-quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, s := range []string{"exact match: copy", "none", "yarn(factor=auto)", "20 held-out examples a size"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("the table lacks %q:\n%s", s, stdout)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, evaluate.ScalingsJSON))
	if err != nil {
		t.Fatal(err)
	}
	var rep evaluate.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	copyTask, _ := task.Lookup("copy")
	sizes := copyTask.Sizes().Test
	if len(rep.Results) != 2 || rep.Examples != 20 {
		t.Fatalf("%d results, %d examples; want 2 and 20", len(rep.Results), rep.Examples)
	}
	for _, r := range rep.Results {
		if len(r.Tasks) != len(sizes) || len(r.Lengths) != 0 {
			t.Errorf("%s: %d task cells and %d lengths, want %d and none", r.Scaling, len(r.Tasks), len(r.Lengths), len(sizes))
		}
	}
	// The run's tasks.json, read as JSON: its cells must be eval's, field for field.
	var run struct {
		Cells []map[string]any `json:"cells"`
	}
	b, err = os.ReadFile(filepath.Join(filepath.Dir(ckpt), "tasks.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	var evalCells struct {
		Cells []map[string]any `json:"cells"`
	}
	b, _ = json.Marshal(map[string]any{"cells": rep.Results[0].Tasks})
	if err := json.Unmarshal(b, &evalCells); err != nil {
		t.Fatal(err)
	}
	if len(run.Cells) != len(evalCells.Cells) {
		t.Fatalf("the run scored %d cells, eval %d", len(run.Cells), len(evalCells.Cells))
	}
	for i, c := range evalCells.Cells {
		if !reflect.DeepEqual(c, run.Cells[i]) {
			t.Errorf("cell %d: eval without a scaling %v, the run %v", i, c, run.Cells[i])
		}
	}
	for _, f := range []string{evaluate.TaskScalingsCSV, evaluate.TaskScalingsPNG, evaluate.TaskScalingsSVG} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, evaluate.ScalingsCSV)); err == nil {
		t.Errorf("%s written for a task checkpoint", evaluate.ScalingsCSV)
	}
}

// TestEvalTasksExamples checks -examples: the examples scored at each size of a task
// checkpoint, refused out of range and on a corpus checkpoint, as are -lengths and -tokens on a
// task checkpoint, each with one line and nothing written.
func TestEvalTasksExamples(t *testing.T) {
	ckpt := trainCopy(t)
	out := filepath.Join(t.TempDir(), "out")
	if code, _, stderr := runEval(t, "-checkpoint", ckpt, "-scaling", "none", "-examples", "7", "-out", out, "-quiet"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(filepath.Join(out, evaluate.ScalingsJSON))
	var rep evaluate.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Results[0].Tasks {
		if c.Examples != 7 {
			t.Errorf("size %d: %d examples, want 7", c.Size, c.Examples)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-checkpoint", ckpt, "-examples", "-1"}, "-examples: -1"},
		{[]string{"-checkpoint", ckpt, "-lengths", "32"}, "trained on tasks (copy)"},
		{[]string{"-checkpoint", ckpt, "-tokens", "512"}, "-lengths/-tokens"},
		{[]string{"-checkpoint", train(t, "rope"), "-examples", "5"}, "-examples: "},
	} {
		out := filepath.Join(t.TempDir(), "out")
		code, _, stderr := runEval(t, append(c.args, "-out", out, "-quiet")...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line naming %q", c.args, code, msg, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: wrote %s", c.args, out)
		}
	}
}
