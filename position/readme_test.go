package position

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestREADMEListsScalings checks the README's table of RoPE scalings against the registry: a
// row per registered type, with its fields and defaults and its Doc, as ScalingRow writes it.
func TestREADMEListsScalings(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range ScalingTypes() {
		if row := scalingRow(name); !strings.Contains(string(b), row) {
			t.Errorf("README.md lacks the row\n%s", row)
		}
	}
}

// scalingRow is the README's row for a registered scaling type.
func scalingRow(name string) string {
	t, _ := LookupScaling(name)
	var fields []string
	for _, p := range ScalingParams() {
		if p.Type == name {
			fields = append(fields, fmt.Sprintf("`%s` (%v)", p.Name, p.Default))
		}
	}
	return fmt.Sprintf("| `%s` | %s | %s |", name, strings.Join(fields, ", "), t.Doc)
}
