package references

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"extrapolate/experiments/claims"
	"extrapolate/experiments/measure"
	_ "extrapolate/experiments/measure/builtin" // registers the built-in measures
	"extrapolate/position"
	"extrapolate/task"
)

// page is the references page, from this package's folder.
const page = "../../docs/references.md"

// citation matches a paper as the code cites it: "Kazemnejad et al. 2023", "Gu and Dao 2023",
// "Chiang & Cholak 2022".
var citation = regexp.MustCompile(`[A-Z][a-z]+(?: et al\.| (?:and|&) [A-Z][a-z]+) \d{4}`)

// sections splits a Markdown page at its level-2 headings: the text under each, by heading.
func sections(text string) map[string]string {
	s := map[string]string{}
	heading := ""
	for _, l := range strings.Split(text, "\n") {
		if h, ok := strings.CutPrefix(l, "## "); ok {
			heading = strings.TrimSpace(h)
			continue
		}
		s[heading] += l + "\n"
	}
	return s
}

// TestRegistriesHaveReferences checks that every registered name appears, as code (`name`), in
// its section of the references page: a new scheme, kind of position ids, scaling, distance map,
// temperature, task, measure or claim needs its source there.
func TestRegistriesHaveReferences(t *testing.T) {
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	s := sections(string(b))
	for _, c := range []struct {
		section string
		names   []string
	}{
		{"Position schemes", position.Names()},
		{"Position ids in training", position.IDsTypes()},
		{"RoPE scalings", position.ScalingTypes()},
		{"Distance maps", position.DistanceMapTypes()},
		{"Attention temperatures", position.Temperatures()},
		{"Tasks", task.Names()},
		{"Measures and claims", measure.Names()},
		{"Measures and claims", claims.IDs()},
	} {
		text, ok := s[c.section]
		if !ok {
			t.Errorf("%s has no section ## %s", page, c.section)
			continue
		}
		if len(c.names) == 0 {
			t.Errorf("section %s: nothing registered to check", c.section)
		}
		for _, name := range c.names {
			if !strings.Contains(text, "`"+name+"`") {
				t.Errorf("%s: section %q does not name `%s`: add its paper or reference code", page, c.section, name)
			}
		}
	}
}

// TestTaskSourcesAreListed checks that every paper a task's Source() cites, as the runs print
// it into their reports, has an entry on the references page.
func TestTaskSourcesAreListed(t *testing.T) {
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range task.Names() {
		tk, err := task.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		cited := citation.FindAllString(tk.Source(), -1)
		if len(cited) == 0 {
			t.Errorf("task %s: its Source() %q cites no paper this test can read", name, tk.Source())
		}
		for _, c := range cited {
			if !strings.Contains(string(b), c) {
				t.Errorf("task %s cites %s, which %s does not list", name, c, page)
			}
		}
	}
}

// TestEntriesLink checks that every entry (a level-3 heading) of the references page links to
// its paper or code, and that no two entries share a heading, so each anchor stays unique.
func TestEntriesLink(t *testing.T) {
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	entries := strings.Split(string(b), "\n### ")[1:]
	for _, e := range entries {
		heading, body, _ := strings.Cut(e, "\n")
		body, _, _ = strings.Cut(body, "\n## ")
		if seen[heading] {
			t.Errorf("%s: two entries named %q", page, heading)
		}
		seen[heading] = true
		if !strings.Contains(body, "](https://") && !strings.Contains(body, "](#") {
			t.Errorf("%s: entry %q has no link", page, heading)
		}
	}
	if len(entries) < 20 {
		t.Fatalf("%s: %d entries; the page was not read", page, len(entries))
	}
}

// anchor is GitHub's anchor of a heading: lower case, spaces as hyphens, and every character
// other than letters, digits, hyphens and underscores dropped.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// sourceRef finds the page's anchor a scheme's Sources() names.
var sourceRef = regexp.MustCompile(`docs/references\.md#([a-z0-9_-]+)`)

// TestSourcesLinkReferences checks that every registered scheme that states the sources of its
// settings (position.Sourced, printed into every report) names its entry on the references
// page, and that the entry exists.
func TestSourcesLinkReferences(t *testing.T) {
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if h, ok := strings.CutPrefix(l, "### "); ok {
			anchors[anchor(h)] = true
		}
	}
	sourced := 0
	for _, name := range position.Names() {
		if name == "mix" { // a mix needs its layers; each states its own sources
			continue
		}
		s, err := position.New(position.Spec{DModel: 16, Heads: 2, Layers: 2, TrainLen: 16, Config: position.Config{Scheme: name}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		src, ok := s.(position.Sourced)
		if !ok {
			continue
		}
		sourced++
		m := sourceRef.FindStringSubmatch(src.Sources())
		switch {
		case m == nil:
			t.Errorf("scheme %s: its Sources() names no docs/references.md#entry: %q", name, src.Sources())
		case !anchors[m[1]]:
			t.Errorf("scheme %s: its Sources() names docs/references.md#%s, which is no entry of the page", name, m[1])
		}
	}
	if sourced == 0 {
		t.Fatal("no registered scheme states its sources; the test checked nothing")
	}
}
