package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"extrapolate/data"
	"extrapolate/experiments/config"
	"extrapolate/experiments/export"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/training"
	"extrapolate/internal/cmdtest"
)

// TestInterrupt stops the import of a model of 25 million weights, which takes seconds to read
// and check: the command writes no checkpoint and exits 130 (internal/exit).
func TestInterrupt(t *testing.T) {
	dir := largeExport(t)
	cmdtest.Interrupted(t, binary, "", "import", "stopping: nothing will be written", 300*time.Millisecond,
		[]string{"-export", dir}, filepath.Join(dir, measure.CheckpointFile))
}

// largeExport writes the export of an untrained model of width 512 and 8 layers, marked as
// trained (config.json without "partial"), as cmd/export writes it, and returns its folder.
func largeExport(t *testing.T) string {
	t.Helper()
	c := config.Default()
	c.Name = "large"
	c.Data = data.Config{Corpus: "text", Path: cmdtest.TextCorpus(t)}
	c.Model.DModel, c.Model.Layers = 512, 8
	if err := c.Complete(); err != nil {
		t.Fatal(err)
	}
	rc, err := c.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	u, err := training.Untrained(rc)
	if err != nil {
		t.Fatal(err)
	}
	e, err := export.New(u)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "export")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, export.WeightsFile), e.Weights)
	writeFile(t, filepath.Join(dir, export.ConfigFile), e.Config)
	editConfig(t, dir, func(c map[string]any) { delete(c, "partial") })
	return dir
}
