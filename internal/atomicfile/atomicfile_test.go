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
