package position

import (
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// scalingsPage is the documentation page that holds the table of RoPE scalings.
const scalingsPage = "../docs/schemes.md"

// TestREADMEListsScalings checks the documentation's table of RoPE scalings, in
// docs/schemes.md (it was in README.md, hence the name), against the registry: a row per
// registered type, with its fields and defaults and its Doc, as scalingRow writes it.
func TestREADMEListsScalings(t *testing.T) {
	b, err := os.ReadFile(scalingsPage)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range ScalingTypes() {
		if row := scalingRow(name); !strings.Contains(string(b), row) {
			t.Errorf("%s lacks the row\n%s", scalingsPage, row)
		}
	}
}

// scalingRow is the table's row for a registered scaling type.
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

// TestDocsListIDsTypes checks the table of kinds of position ids in docs/schemes.md against the
// registry: a row per registered kind, with its fields and defaults and its Doc.
func TestDocsListIDsTypes(t *testing.T) {
	b, err := os.ReadFile(scalingsPage)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range IDsTypes() {
		if row := idsRow(name); !strings.Contains(string(b), row) {
			t.Errorf("%s lacks the row\n%s", scalingsPage, row)
		}
	}
}

// idsRow is the table's row for a registered kind of position ids, its fields sorted.
func idsRow(name string) string {
	k, _ := idsTypes.lookup(name)
	v := reflect.ValueOf(k.Params()).Elem()
	var fields []string
	for i := 0; i < v.NumField(); i++ {
		tag, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
		fields = append(fields, fmt.Sprintf("`%s` (%v)", tag, v.Field(i).Interface()))
	}
	sort.Strings(fields)
	return fmt.Sprintf("| `%s` | %s | %s |", name, strings.Join(fields, ", "), k.Doc)
}
