package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// reportComparison is a finished comparison's config, over the base config: plain RoPE and
// learned positions, whose table stops at the training length, each with attention
// diagnostics, so that every kind of file a report reads is there.
const reportComparison = `comparison: cmp
seeds: [1, 2]
set: {eval.measures: [attention]}
runs:
  - {config: config}
  - {config: config, label: learned, set: {position.scheme: learned}}
`

// runDamage is one way a file of a finished run is damaged: edit makes the new content from the
// file as the run wrote it (and the comparison's runs folder), nil for none (removed); want is
// in the report's one-line refusal.
type runDamage struct {
	name, file string
	edit       editFunc
	want       string
}

// unfinished are the damages that leave a run unfinished, its results gone or its config.yaml
// not its own: only a report refuses them, and running the comparison again resumes the run or
// refuses it as it does any run's folder.
var unfinished = map[string]bool{"results removed": true, "config truncated": true}

type editFunc func(t *testing.T, runs string, b []byte) []byte

// to replaces a file with b, whatever it held.
func to(b string) editFunc { return func(*testing.T, string, []byte) []byte { return []byte(b) } }

// copyOf replaces a file with another run's file.
func copyOf(rel string) editFunc {
	return func(t *testing.T, runs string, _ []byte) []byte {
		b, err := os.ReadFile(filepath.Join(runs, rel))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

func halved(_ *testing.T, _ string, b []byte) []byte { return b[:len(b)/2] }

func removed(*testing.T, string, []byte) []byte { return nil }

// jsonEdit edits a JSON file as a value: the file stays valid JSON of another content.
func jsonEdit(edit func(m map[string]any)) editFunc {
	return func(t *testing.T, _ string, b []byte) []byte {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
}

// at is the i-th element of a JSON list, as a mapping.
func at(v any, i int) map[string]any { return v.([]any)[i].(map[string]any) }

func runDamages() []runDamage {
	results := filepath.Join("tiny-s1", "ppl_vs_len.json")
	positions := filepath.Join("tiny-s1", "loss_by_position.json")
	attention := filepath.Join("tiny-s1", "attention.json")
	return []runDamage{
		{"results removed", results, removed, "holds results for 3 of the 4 runs; missing tiny-s1"},
		{"results truncated", results, halved, "ppl_vs_len.json: does not read as a run's results"},
		{"results emptied", results, to(""), "ppl_vs_len.json: does not read as a run's results"},
		{"results a list", results, to("[]"), "ppl_vs_len.json: does not read as a run's results"},
		{"results null", results, to("null"), `ppl_vs_len.json: config_sha256: ""`},
		{"results of another config", results, jsonEdit(func(m map[string]any) { m["config_sha256"] = "00" }), `config_sha256: "00"`},
		{"a length missing", results, jsonEdit(func(m map[string]any) { m["lengths"] = m["lengths"].([]any)[:1] }), "lengths: length 16 missing; the config evaluates at 8, 16"},
		{"lengths emptied", results, jsonEdit(func(m map[string]any) { m["lengths"] = []any{} }), "lengths: none"},
		{"negative perplexity", results, jsonEdit(func(m map[string]any) { at(m["lengths"], 0)["perplexity"] = -3 }), "length 8: perplexity -3"},
		{"perplexity a word", results, jsonEdit(func(m map[string]any) { at(m["lengths"], 0)["perplexity"] = "low" }), "does not read as a run's results"},
		{"status unknown", results, jsonEdit(func(m map[string]any) { m["status"] = "done" }), `status: "done", want ok or failed`},
		{"not applicable by hand", results, jsonEdit(func(m map[string]any) {
			l := at(m["lengths"], 1)
			l["applicable"], l["reason"], l["loss"], l["perplexity"] = false, "edited", nil, nil
		}), "length 16: not applicable (\"edited\"), but the scheme takes 16 positions"},
		{"scored past the table", filepath.Join("learned-s1", "ppl_vs_len.json"), jsonEdit(func(m map[string]any) {
			l := at(m["lengths"], 1)
			l["applicable"], l["loss"], l["perplexity"], l["tokens"] = true, 0.0, 1.0, 64
		}), "length 16: scored, but the scheme cannot take 16 positions"},
		{"positions removed", positions, removed, "loss_by_position.json: missing"},
		{"positions truncated", positions, halved, "loss_by_position.json: does not read"},
		{"positions emptied", positions, to(""), "loss_by_position.json: does not read"},
		{"positions of nothing", positions, to("{}"), "loss_by_position.json: holds run  seed 0's, not tiny-s1 seed 1's"},
		{"positions of another run", positions, copyOf(filepath.Join("tiny-s2", "loss_by_position.json")), "loss_by_position.json: holds run tiny-s2 seed 2's"},
		{"positions without a length", positions, jsonEdit(func(m map[string]any) { m["lengths"] = m["lengths"].([]any)[1:] }), "loss_by_position.json: lengths: length 8 missing"},
		{"positions' tokens", positions, jsonEdit(func(m map[string]any) {
			b := at(at(m["lengths"], 0)["positions"], 0)
			b["tokens"] = b["tokens"].(float64) + 1
		}), "length 8: buckets hold 65 tokens, but the length scored 64"},
		{"positions' negative loss", positions, jsonEdit(func(m map[string]any) { at(at(m["lengths"], 1)["positions"], 3)["loss"] = -1 }), "length 16: positions 3 to 3: loss -1"},
		{"attention removed", attention, removed, "attention.json: missing"},
		{"attention truncated", attention, halved, "attention.json: does not read"},
		{"attention's heads", attention, jsonEdit(func(m map[string]any) {
			l := at(m["lengths"], 0)
			l["heads"] = l["heads"].([]any)[:1]
		}), "attention.json: length 8: 1 heads, want 2"},
		{"attention's negative entropy", attention, jsonEdit(func(m map[string]any) {
			at(at(at(m["lengths"], 1)["heads"], 1)["bins"], 2)["entropy"] = -1
		}), "length 16: layer 0 head 1: queries 2 to 3: entropy -1"},
		{"config truncated", filepath.Join("tiny-s1", "config.yaml"), halved, "holds results for 3 of the 4 runs; missing tiny-s1"},
	}
}

// TestReportRefusesDamagedRuns damages each file a finished comparison's report reads, one at a
// time and in every way above: the report, its check and the comparison run again must each
// refuse it with exit 2 and one line saying what is wrong, and leave every file as it was. The
// files it does not read may be damaged without changing it.
func TestReportRefusesDamagedRuns(t *testing.T) {
	dir := setup(t, good)
	os.WriteFile(filepath.Join(dir, "cmp.yaml"), []byte(reportComparison), 0o644)
	if code, _, stderr := runTrain(t, dir, "-config", "./cmp.yaml", "-out", "done", "-quiet"); code != 0 {
		t.Fatalf("the comparison: exit %d: %s", code, stderr)
	}
	finished := snapshot(t, filepath.Join(dir, "done"))
	for i, d := range runDamages() {
		t.Run(d.name, func(t *testing.T) {
			commands := [][]string{{"-report"}, {"-report", "-check"}, nil}
			if unfinished[d.name] {
				commands = commands[:2]
			}
			refusesDamage(t, dir, finished, fmt.Sprintf("damaged%d", i), d, commands)
		})
	}
	// The files no report reads: damaging them changes nothing it says.
	out := filepath.Join(dir, "unread")
	restore(t, finished, filepath.Join(dir, "done"), out)
	for path := range snapshot(t, filepath.Join(out, "runs", "tiny-s1")) {
		switch filepath.Base(path) {
		case "config.yaml", "ppl_vs_len.json", "loss_by_position.json", "attention.json":
		default:
			os.WriteFile(path, []byte("damaged"), 0o644)
		}
	}
	if code, _, stderr := runTrain(t, dir, "-config", "./cmp.yaml", "-out", out, "-report", "-quiet"); code != 0 {
		t.Fatalf("the report over files it does not read: exit %d: %s", code, stderr)
	}
	want, _ := os.ReadFile(filepath.Join(dir, "done", "ppl_by_run.csv"))
	if got, _ := os.ReadFile(filepath.Join(out, "ppl_by_run.csv")); string(got) != string(want) {
		t.Errorf("the report changed with files it does not read:\n%s\nwant\n%s", got, want)
	}
}

// refusesDamage copies the finished comparison in dir/done (its snapshot finished) to
// dir/name, damages it as d says, and requires each command, train's arguments after the
// config, the output folder and -quiet, to refuse it with exit 2 and one line holding d.want,
// and to leave every file as it was.
func refusesDamage(t *testing.T, dir string, finished map[string]string, name string, d runDamage, commands [][]string) {
	t.Helper()
	out := filepath.Join(dir, name)
	restore(t, finished, filepath.Join(dir, "done"), out)
	path := filepath.Join(out, "runs", d.file)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if edited := d.edit(t, filepath.Join(out, "runs"), b); edited == nil {
		os.Remove(path)
	} else {
		os.WriteFile(path, edited, 0o644)
	}
	before := snapshot(t, out)
	for _, args := range commands {
		code, stdout, stderr := runTrain(t, dir, append([]string{"-config", "./cmp.yaml", "-out", out, "-quiet"}, args...)...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || strings.Contains(msg, "\n") || !strings.Contains(msg, d.want) || stdout != "" {
			t.Errorf("train %v: exit %d, stdout %q, stderr %q; want 2 and one line with %q", args, code, stdout, msg, d.want)
		}
	}
	if after := snapshot(t, out); !maps.Equal(before, after) {
		t.Error("a refused report changed the comparison's files")
	}
}

// restore writes the files of a snapshot of folder from into folder to.
func restore(t *testing.T, files map[string]string, from, to string) {
	t.Helper()
	for path, b := range files {
		rel, err := filepath.Rel(from, path)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(to, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
