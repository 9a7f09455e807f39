package docnumbers

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var (
	// about matches a time a config's comment states.
	about = regexp.MustCompile(`[Aa]bout ([0-9]+(?:\.[0-9]+)?) (minutes?|hours?)`)
	// runCount matches a number of runs a comment states.
	runCount = regexp.MustCompile(`\b([0-9]+) runs\b`)
	// weightCount matches a weight count a comment states.
	weightCount = regexp.MustCompile(`([0-9]+(?:\.[0-9]+)?[kM]) weights`)
	// repoPath matches a file of the repository a comment names.
	repoPath = regexp.MustCompile(`\b(?:experiments|docs|configs|slurm|internal|cmd|data|position|model|task)/[A-Za-z0-9_./-]*[A-Za-z0-9_]`)
	// submit matches a Slurm submission, whose array may not have more tasks than runs.
	submit = regexp.MustCompile(`slurm/submit\.sh ([A-Za-z0-9_]+) ([0-9]+)`)
)

// TestConfigs checks the comments of configs/*.yaml: a time stated for a comparison whose
// results are committed is within a factor of 1.5 of its report's computation, a weight count
// is its report's, every file named exists, and a Slurm submission asks for at most the
// comparison's runs.
func TestConfigs(t *testing.T) {
	if !committedResults()["compare"] {
		t.Fatalf(".gitignore lets no results/compare/ in: the configs' times would check nothing (%v)", committedResults())
	}
	files, err := filepath.Glob(filepath.Join(root, "configs", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		var comments []string
		for _, l := range strings.Split(string(b), "\n") {
			if _, c, ok := strings.Cut(l, "#"); ok {
				comments = append(comments, c)
			}
		}
		for _, p := range configProblems(name, strings.Join(comments, "\n")) {
			t.Errorf("configs/%s.yaml: %s", name, p)
		}
	}
}

func configProblems(name, comments string) []string {
	var problems []string
	if committedResults()[name] {
		cs, err := comparisons(name)
		if err != nil {
			return []string{err.Error()}
		}
		secs := 0.0
		for _, c := range cs {
			secs += c.seconds()
		}
		for _, m := range about.FindAllStringSubmatch(comments, -1) {
			v, _ := strconv.ParseFloat(m[1], 64)
			if strings.HasPrefix(m[2], "hour") {
				v *= 60
			}
			if mins := secs / 60; v > 1.5*mins || v < mins/1.5 {
				problems = append(problems, fmt.Sprintf("%q, but the report's runs took %.0f s (%.0f minutes) of computation", m[0], secs, mins))
			}
		}
		runs := 0
		for _, c := range cs {
			runs += len(c.Runs)
		}
		for _, m := range runCount.FindAllStringSubmatch(comments, -1) {
			if n, _ := strconv.Atoi(m[1]); n != runs {
				problems = append(problems, fmt.Sprintf("%q, but the report has %d", m[0], runs))
			}
		}
		for _, m := range weightCount.FindAllStringSubmatch(comments, -1) {
			if want := format(float64(cs[0].params()), m[1]); want != m[1] {
				problems = append(problems, fmt.Sprintf("%q, but the report's model has %d (%s)", m[0], cs[0].params(), want))
			}
		}
	}
	problems = append(problems, pathProblems(comments)...)
	return append(problems, submitProblems(comments)...)
}

// pathProblems lists the files text names that do not exist.
func pathProblems(text string) []string {
	var problems []string
	for _, p := range repoPath.FindAllString(text, -1) {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err != nil {
			problems = append(problems, fmt.Sprintf("names %s, which does not exist", p))
		}
	}
	return problems
}

// submitProblems lists the Slurm submissions in text that ask for more array tasks than the
// committed comparison has runs.
func submitProblems(text string) []string {
	var problems []string
	for _, m := range submit.FindAllStringSubmatch(text, -1) {
		if !committedResults()[m[1]] {
			continue
		}
		cs, err := comparisons(m[1])
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		runs := 0
		for _, c := range cs {
			runs += len(c.Runs)
		}
		if n, _ := strconv.Atoi(m[2]); n > runs {
			problems = append(problems, fmt.Sprintf("%q: %d array tasks, but %s has %d runs (submit.sh refuses more)", m[0], n, m[1], runs))
		}
	}
	return problems
}

// TestPagesSubmit checks the Slurm submissions in the code blocks of README.md and docs/*.md
// (the commands a reader runs; prose may show one refused) as TestConfigs checks the configs'.
func TestPagesSubmit(t *testing.T) {
	for _, page := range pages(t) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(root, page)
		var code strings.Builder
		for _, f := range fenced(string(b)) {
			code.WriteString(string(b[f[0]:f[1]]))
		}
		for _, p := range submitProblems(code.String()) {
			t.Errorf("%s: %s", name, p)
		}
	}
}

// allowed matches a results folder .gitignore lets into the repository: !/results/NAME/.
var allowed = regexp.MustCompile(`(?m)^!/results/([A-Za-z0-9_.-]+)/$`)

// committedResults are the results folders whose reports are committed, as .gitignore lists
// them. A folder that merely exists is not one: the README's first command writes
// results/rope_ntk, and a user's runs write beside the committed ones.
func committedResults() map[string]bool {
	b, err := os.ReadFile(filepath.Join(root, ".gitignore"))
	if err != nil {
		panic(err)
	}
	out := map[string]bool{}
	for _, m := range allowed.FindAllStringSubmatch(string(b), -1) {
		out[m[1]] = true
	}
	return out
}
