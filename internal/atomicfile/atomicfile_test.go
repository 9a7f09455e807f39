package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestTempTarget tells WriteFile's temporary files from a user's files named alike: only the
// former may be removed as leftovers of a run that died.
func TestTempTarget(t *testing.T) {
	dir := t.TempDir()
	for _, target := range []string{"model.ckpt", "ppl_vs_len.json", "a.tmp"} {
		f, err := os.CreateTemp(dir, tempPattern(target))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if got, ok := TempTarget(filepath.Base(f.Name())); !ok || got != target {
			t.Errorf("%s: TempTarget %q, %v; want %q, true", f.Name(), got, ok, target)
		}
	}
	for _, name := range []string{".env.tmp", ".x.tmpl", ".x.tmp12a", "x.tmp12", ".tmp12", ".x.tmp", "..tmp1", ".x.tmp-1"} {
		if got, ok := TempTarget(name); ok {
			t.Errorf("%s: taken for a temporary file of %q", name, got)
		}
	}
}

func TestWriteFileLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	if err := WriteFile(path, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "f.json" {
		t.Fatalf("folder holds %v, want f.json alone", entries)
	}
}
