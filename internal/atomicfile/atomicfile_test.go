package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrorsNameThePath checks that a failed write names the file asked for, not the temporary
// file, and leaves nothing behind.
func TestErrorsNameThePath(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "missing", "a.png"), "missing: no such file or directory"},
		{filepath.Join(dir, "sub"), "a folder is there"},
	} {
		err := WriteFile(c.path, []byte("x"))
		if err == nil || !strings.Contains(err.Error(), "writing "+c.path) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), ".tmp") {
			t.Errorf("%s: %v, want an error naming it (%s) and no temporary file", c.path, err, c.want)
		}
	}
	for _, d := range []string{dir, filepath.Join(dir, "sub")} {
		if entries, _ := os.ReadDir(d); len(entries) != map[bool]int{true: 1, false: 0}[d == dir] {
			t.Errorf("%s holds %d entries after failed writes", d, len(entries))
		}
	}
	if err := WriteFile(filepath.Join(dir, "ok"), []byte("x")); err != nil {
		t.Fatal(err)
	}
}

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
