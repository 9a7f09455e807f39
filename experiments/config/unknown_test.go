package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnknown checks the message for a config name that names no file: the nearest name by
// edit distance and the list, and nothing for a name or path that exists.
func TestUnknown(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.MkdirAll(Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"rope", "rope_ntk", "rope_yarn", "alibi"} {
		if err := os.WriteFile(filepath.Join(Dir, n+".yaml"), []byte("name: "+n+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for arg, want := range map[string]string{
		"rope_nkt":  "the nearest is rope_ntk (configs: alibi, rope, rope_ntk, rope_yarn)",
		"rope_yrn":  "the nearest is rope_yarn",
		"alibi.yml": "the nearest is alibi",
	} {
		if err := Unknown(arg); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", arg, err, want)
		}
	}
	for _, arg := range []string{"rope_ntk", "rope.yaml", filepath.Join(dir, "missing.yaml")} {
		if err := Unknown(arg); err != nil {
			t.Errorf("%s: %v, want none", arg, err)
		}
	}
	for pair, want := range map[[2]string]int{{"kitten", "sitting"}: 3, {"", "abc"}: 3, {"rope", "rope"}: 0} {
		if d := editDistance(pair[0], pair[1]); d != want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", pair[0], pair[1], d, want)
		}
	}
}
