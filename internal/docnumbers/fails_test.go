package docnumbers

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFailsOnChangedNumber shows that the check can fail: with KERPLE's deciding ratio in a
// copy of results/compare_large/ppl_by_run.json moved, README.md and docs/results.md no
// longer pass; and a marked number changed in a page fails against the committed reports.
func TestFailsOnChangedNumber(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	results, err := os.ReadFile(filepath.Join(root, "docs", "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string]string{
		filepath.Join(root, "README.md"):          string(readme),
		filepath.Join(root, "docs", "results.md"): string(results),
	}

	// A marked number changed in the page.
	m := marker.FindStringSubmatchIndex(string(readme))
	if m == nil {
		t.Fatal("README.md has no marked number")
	}
	changed := string(readme[:m[4]]) + "9" + string(readme[m[4]:])
	if _, problems := check(filepath.Join(root, "README.md"), changed); len(problems) == 0 {
		t.Errorf("README.md with %q for %q: no problem found", "9"+string(readme[m[4]:m[5]]), readme[m[4]:m[5]])
	}

	// A number changed in a report.
	tmp := t.TempDir()
	entries, err := os.ReadDir(resultsDir)
	if err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(resultsDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "compare_large" {
			if err := os.Symlink(filepath.Join(abs, e.Name()), filepath.Join(tmp, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	large := filepath.Join(tmp, "compare_large")
	if err := os.Mkdir(large, 0o755); err != nil {
		t.Fatal(err)
	}
	files, err := os.ReadDir(filepath.Join(abs, "compare_large"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Name() != "ppl_by_run.json" {
			if err := os.Symlink(filepath.Join(abs, "compare_large", f.Name()), filepath.Join(large, f.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(abs, "compare_large", "ppl_by_run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	moved := false
	for _, c := range rep["claims"].([]any) {
		c := c.(map[string]any)
		if c["id"] == "kerple_matches_alibi" {
			d := c["deciding"].(map[string]any)
			d["ratio"] = d["ratio"].(float64) + 0.02
			moved = true
		}
	}
	if !moved {
		t.Fatal("compare_large has no deciding ratio for kerple_matches_alibi")
	}
	if b, err = json.Marshal(rep); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(large, "ppl_by_run.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}

	loadMu.Lock()
	saved, savedDir := loaded, resultsDir
	loaded, resultsDir = map[string]any{}, tmp
	loadMu.Unlock()
	defer func() {
		loadMu.Lock()
		loaded, resultsDir = saved, savedDir
		loadMu.Unlock()
	}()
	for page, text := range pages {
		_, problems := check(page, text)
		found := false
		for _, p := range problems {
			found = found || strings.Contains(p, "compare_large") || strings.Contains(p, "verdicts")
		}
		if !found {
			t.Errorf("%s passes with compare_large's KERPLE ratio moved by 0.02 (problems: %q)", page, problems)
		} else {
			t.Logf("%s with KERPLE's ratio moved: %s", filepath.Base(page), problems[0])
		}
	}
}
