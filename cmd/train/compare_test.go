package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestComparisonBadInput checks comparison flags that used to exit 0 having done nothing: a
// shard that selects no run, and a report with no runs to report.
func TestComparisonBadInput(t *testing.T) {
	dir := setup(t, good)
	os.WriteFile(filepath.Join(dir, "cmp.yaml"), []byte("comparison: cmp\nseeds: [1, 2]\nruns: [{config: config}]\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-shard", "1/1000000000000"}, "-shard"},
		{[]string{"-shard", "2/3"}, "-shard"},
		{[]string{"-report"}, "-report"},
	} {
		out := filepath.Join(dir, "out")
		code, _, stderr := runTrain(t, dir, append([]string{"-config", "./cmp.yaml", "-out", out, "-quiet"}, c.args...)...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line naming %s", c.args, code, msg, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: created %s", c.args, out)
		}
	}
}
