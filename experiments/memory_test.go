package experiments

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestMemoryEstimate checks the estimate against the sizes that must fit (every committed
// config) and those of the issue that died of out-of-memory, and that Check refuses the latter
// naming the estimate.
func TestMemoryEstimate(t *testing.T) {
	configs, _ := filepath.Glob(filepath.Join("..", "configs", "*.yaml"))
	for _, path := range configs {
		if ok, err := IsComparison(path); err != nil || ok {
			continue
		}
		c, err := Load(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if e := estimateMemory(c); e.Total() > 2<<30 {
			t.Errorf("%s: estimate %s, want well below 2 GiB", path, bytesString(e.Total()))
		}
	}
	for _, sets := range [][]string{
		{"model.d_model=8192", "model.layers=256"},
		{"model.d_model=8192", "train.batch_size=65536"},
	} {
		_, err := Load(filepath.Join("..", "configs", "rope.yaml"), sets)
		if err == nil || !strings.Contains(err.Error(), "of memory") || !strings.Contains(err.Error(), "TiB") {
			t.Errorf("%v: %v, want a refusal naming the estimate in TiB", sets, err)
		}
	}
}
