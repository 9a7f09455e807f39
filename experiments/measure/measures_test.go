package measure_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
	_ "extrapolate/experiments/measure/builtin" // the built-in measures, in their order
	"extrapolate/experiments/measure/passkey"
	"extrapolate/experiments/measure/positions"
)

// fileMeasure is a measure that only names its files, for the registry's checks.
type fileMeasure struct {
	name  string
	files []string
}

func (m fileMeasure) Name() string    { return m.name }
func (m fileMeasure) Files() []string { return m.files }

// TestRegisterMeasureRefuses checks that a measure whose name or files clash with another's,
// or with the run's own files, is refused before it is registered.
func TestRegisterMeasureRefuses(t *testing.T) {
	before := strings.Join(measure.Names(), " ")
	for _, m := range []fileMeasure{
		{"attention", nil},
		{"other", []string{positions.RunCSV}},
		{"other", []string{measure.ResultsJSON}},
		{"lengths", nil}, // a field of the results file
		{"../x", nil},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%+v registered", m)
				}
			}()
			measure.Register(m)
		}()
	}
	if after := strings.Join(measure.Names(), " "); after != before || !strings.HasPrefix(after, "perplexity loss_by_position ") {
		t.Errorf("measures %v after refusals, %v before", after, before)
	}
}

// TestEvalMeasures checks eval.measures: unknown or repeated names are refused, naming the field;
// a config without it marshals, and so hashes, as before measures existed.
func TestEvalMeasures(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(path, []byte("name: x\n"), 0o644)
	for _, set := range []string{"eval.measures=[bogus]", "eval.measures=[attention, attention]", "eval.measures=attention"} {
		if _, err := config.Load(path, []string{set}); err == nil || !strings.Contains(err.Error(), "eval.measures") {
			t.Errorf("-set %s: %v, want an error naming eval.measures", set, err)
		}
	}
	c, err := config.Load(path, []string{"eval.measures=[attention]"})
	if err != nil {
		t.Fatal(err)
	}
	if got := measure.MeasuresOf(c); len(got) != 3 || got[2].Name() != "attention" {
		t.Errorf("measures of a config asking for attention: %v", got)
	}
	if c, err = config.Load(path, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(c.Marshal()), "measures") {
		t.Fatalf("a config without eval.measures mentions it:\n%s", c.Marshal())
	}
	if got := measure.MeasuresOf(c); len(got) != 2 {
		t.Errorf("measures of a config asking for none: %v", got)
	}
}

// TestResultMeasurements checks the results file's measurements: after Result's own fields,
// those of registered measures in the registry's order, then others by name, and read back as
// they were written.
func TestResultMeasurements(t *testing.T) {
	res := &measure.Result{Name: "r", Status: "ok"}
	for _, kv := range []struct {
		name string
		v    any
	}{{"zeta", 1}, {"passkey", []passkey.Cell{{Length: 64, Depth: 0.5, Accuracy: 0.25}}}, {"alpha", "a"}} {
		if err := res.SetMeasurement(kv.name, kv.v); err != nil {
			t.Fatal(err)
		}
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	order := []string{`"name"`, `"protocol"`, `"lengths"`, `"passkey"`, `"alpha"`, `"zeta"`}
	for i := 1; i < len(order); i++ {
		if strings.Index(s, order[i-1]) >= strings.Index(s, order[i]) {
			t.Fatalf("%s is not before %s:\n%s", order[i-1], order[i], s)
		}
	}
	var back measure.Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	again, _ := json.MarshalIndent(&back, "", "  ")
	if string(again) != s {
		t.Fatalf("read back and written again:\n%s\nwant:\n%s", again, s)
	}
	if cells := passkey.Of(&back); len(cells) != 1 || cells[0].Accuracy != 0.25 {
		t.Fatalf("passkey read back: %+v", cells)
	}
	if _, ok := back.Measured["name"]; ok {
		t.Fatal("a field of Result's own kept as a measurement")
	}
}
