package doclinks

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// root is the repository's top folder, from this package's.
const root = "../.."

var (
	// link matches an inline link or image, [text](target) or ![alt](target "title"), and
	// captures its target.
	link = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// codeSpan matches inline code, which may show brackets that are no link.
	codeSpan = regexp.MustCompile("`[^`]*`")
	heading  = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	scheme   = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	// inlineLink matches a link inside a heading, whose anchor keeps only its text.
	inlineLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// TestLinks checks every relative link of README.md, docs/*.md and docs/notes/*.md: its file
// must exist and its #anchor, in a Markdown page, must be one of that page's headings.
func TestLinks(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	notes, err := filepath.Glob(filepath.Join(root, "docs", "notes", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, notes...)
	pages = append([]string{filepath.Join(root, "README.md")}, pages...)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(page string) map[string]bool {
		if a, ok := anchors[page]; ok {
			return a
		}
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		a := map[string]bool{}
		seen := map[string]int{}
		for _, l := range prose(string(b)) {
			if m := heading.FindStringSubmatch(l); m != nil {
				s := slug(m[1])
				if n := seen[s]; n > 0 {
					a[s+"-"+strconv.Itoa(n)] = true
				} else {
					a[s] = true
				}
				seen[s]++
			}
		}
		anchors[page] = a
		return a
	}
	links := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(root, page)
		for i, l := range prose(string(b)) {
			if l == "" {
				continue
			}
			for _, m := range link.FindAllStringSubmatch(codeSpan.ReplaceAllString(l, "code"), -1) {
				target := m[1]
				if scheme.MatchString(target) {
					continue // a web address
				}
				links++
				file, anchor, _ := strings.Cut(target, "#")
				path := page
				if file != "" {
					path = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
				}
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d: link to %s: no such file", name, i+1, target)
					continue
				}
				if anchor != "" && strings.HasSuffix(path, ".md") && !anchorsOf(path)[anchor] {
					t.Errorf("%s:%d: link to %s: no heading with anchor #%s there", name, i+1, target, anchor)
				}
			}
		}
	}
	if links == 0 {
		t.Fatal("no relative links found: the pages were not read")
	}
}

// prose returns the lines of a Markdown page with those of fenced code blocks blanked, so that
// line numbers stay right and code is not read as links or headings.
func prose(text string) []string {
	lines := strings.Split(text, "\n")
	fence := ""
	for i, l := range lines {
		s := strings.TrimSpace(l)
		switch {
		case fence == "" && (strings.HasPrefix(s, "```") || strings.HasPrefix(s, "~~~")):
			fence = s[:3]
			lines[i] = ""
		case fence != "":
			if strings.HasPrefix(s, fence) {
				fence = ""
			}
			lines[i] = ""
		}
	}
	return lines
}

// slug is the anchor GitHub gives a heading: lower case, spaces as hyphens, and every character
// other than a letter, digit, hyphen or underscore dropped; a link is read as its text.
func slug(h string) string {
	h = inlineLink.ReplaceAllString(h, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
