package main

import (
	"path/filepath"
	"testing"
	"time"

	"extrapolate/experiments/export"
	"extrapolate/internal/cmdtest"
)

// TestInterrupt stops the export of a config's untrained model of 25 million weights, which
// takes seconds to draw and encode: the command writes neither file and exits 130
// (internal/exit). It used to die of the signal, or, had the signal come during the writes,
// leave the weights without their config.json.
func TestInterrupt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "export")
	cmdtest.Interrupted(t, binary, "", "export", "stopping: nothing will be written", time.Second,
		[]string{"-config", tinyConfig(t), "-set", "model.d_model=512", "-set", "model.layers=8", "-out", dir},
		filepath.Join(dir, export.WeightsFile), filepath.Join(dir, export.ConfigFile))
}
