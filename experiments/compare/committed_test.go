package compare

import (
	"path/filepath"
	"testing"
)

// TestCommittedResultsRead checks every committed comparison's runs as a report does, writing
// nothing: the checks of a run's files must never refuse what runs really write.
func TestCommittedResultsRead(t *testing.T) {
	for _, name := range []string{"compare", "compare_large", "passkey", "scale", "scale_length", "tasks", "maps", "sinks", "rope_base", "rope_base_passkey", "copy_hard_alibi"} {
		plan, err := LoadPlan(filepath.Join("..", "..", "configs", name+".yaml"), nil)
		if err != nil {
			t.Fatal(err)
		}
		r := &Runner{Plan: plan, Dir: filepath.Join("..", "..", "results", name)}
		if missing, _, err := r.MissingRuns(); err != nil || len(missing) > 0 {
			t.Fatalf("%s: %v, missing %v", name, err, missing)
		}
		if err := r.CheckReport(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
