package layoutcheck

import (
	"bufio"
	"errors"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// root is the repository's top folder, from this package's.
const root = "../.."

// page is the page that states the layout.
var page = filepath.Join(root, "docs", "layout.md")

// code matches a path or pattern in backquotes.
var code = regexp.MustCompile("`([^`]+)`")

// A layer is a row of the page's table of layers: the packages it names, exact or as dir/*, its
// place (0 the lowest), and whether its packages may import each other.
type layer struct {
	index    int
	patterns []string
	within   bool
}

// TestLayout checks the page's two tables against the module's packages and their imports.
func TestLayout(t *testing.T) {
	lines := readLines(t, page)
	module := modulePath(t)
	pkgs := packages(t, module)
	if len(pkgs) < 10 {
		t.Fatalf("found %d packages under %s, too few to be the module's", len(pkgs), root)
	}
	held := firstColumn(t, lines)
	for _, p := range held {
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p))); err != nil {
			t.Errorf("%s: the first table names %s, which the tree does not have", page, p)
		}
	}
	layers := layerRows(t, lines)
	used := map[string]bool{}
	where := map[string]layer{}
	for _, p := range slices.Sorted(maps.Keys(pkgs)) {
		if !slices.Contains(held, p) {
			t.Errorf("%s: package %s is not in the first table: say what it holds", page, p)
		}
		l, pattern, ok := layerOf(layers, p)
		if !ok {
			t.Errorf("%s: package %s is in no row of the layers: give it one", page, p)
			continue
		}
		where[p], used[pattern] = l, true
	}
	for _, l := range layers {
		for _, pattern := range l.patterns {
			if !used[pattern] {
				t.Errorf("%s: the layers' row %d names %s, which is no package of the module", page, l.index+1, pattern)
			}
		}
	}
	checked := 0
	for p, imports := range pkgs {
		from, ok := where[p]
		if !ok {
			continue
		}
		for _, q := range imports {
			to, ok := where[q]
			if !ok {
				continue // reported above
			}
			checked++
			switch {
			case to.index > from.index:
				t.Errorf("%s imports %s, of a layer above its own (row %d over row %d of %s)", p, q, to.index+1, from.index+1, page)
			case to.index == from.index && !from.within:
				t.Errorf("%s imports %s, of its own layer (row %d of %s), whose packages do not import each other", p, q, from.index+1, page)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no import between the module's packages was checked")
	}
}

// readLines reads a page's lines.
func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// modulePath is the module's path, from go.mod.
func modulePath(t *testing.T) string {
	t.Helper()
	for _, line := range readLines(t, filepath.Join(root, "go.mod")) {
		if m, ok := strings.CutPrefix(line, "module "); ok {
			return strings.TrimSpace(m)
		}
	}
	t.Fatal("go.mod names no module")
	return ""
}

// packages are the module's packages, by path under the module's folder ("cmd/train"), each
// with the packages of the module its files import, tests aside, whatever their build tags.
func packages(t *testing.T, module string) map[string][]string {
	t.Helper()
	pkgs := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		imports := pkgs[pkg]
		for _, spec := range f.Imports {
			ip, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			if q, ok := strings.CutPrefix(ip, module+"/"); ok && !slices.Contains(imports, q) {
				imports = append(imports, q)
			} else if ip == module {
				return errors.New(path + ": imports the module's root, which is no package")
			}
		}
		pkgs[pkg] = imports
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// firstColumn is every path the page's first table names in its first column.
func firstColumn(t *testing.T, lines []string) []string {
	t.Helper()
	var paths []string
	for _, row := range table(lines, 0) {
		for _, m := range code.FindAllStringSubmatch(row[0], -1) {
			paths = append(paths, m[1])
		}
	}
	if len(paths) == 0 {
		t.Fatalf("%s: no paths in the first column of its first table", page)
	}
	return paths
}

// layerRows reads the table of layers, the first table after the heading "## Layers", whose
// second column names the packages and third says whether they import each other (yes or no).
func layerRows(t *testing.T, lines []string) []layer {
	t.Helper()
	start := slices.Index(lines, "## Layers")
	if start < 0 {
		t.Fatalf("%s: no section ## Layers", page)
	}
	var layers []layer
	for i, row := range table(lines, start) {
		if len(row) < 3 {
			t.Fatalf("%s: the layers' row %d has %d columns, want 3", page, i+1, len(row))
		}
		l := layer{index: i}
		for _, m := range code.FindAllStringSubmatch(row[1], -1) {
			l.patterns = append(l.patterns, m[1])
		}
		switch strings.TrimSpace(row[2]) {
		case "yes":
			l.within = true
		case "no":
		default:
			t.Fatalf("%s: the layers' row %d says %q of its packages importing each other, want yes or no", page, i+1, row[2])
		}
		if len(l.patterns) == 0 {
			t.Fatalf("%s: the layers' row %d names no package", page, i+1)
		}
		layers = append(layers, l)
	}
	if len(layers) < 2 {
		t.Fatalf("%s: %d layers, too few to order anything", page, len(layers))
	}
	return layers
}

// table returns the cells of the body rows of the first Markdown table at or after line start:
// its header and the line under it skipped.
func table(lines []string, start int) [][]string {
	var rows [][]string
	in := false
	for i := start; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(line, "|") {
			if in {
				break
			}
			continue
		}
		if !in {
			in = true
			i++ // the line of dashes under the header
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		rows = append(rows, cells)
	}
	return rows
}

// layerOf is the layer of package p and the pattern that places it: the row that names it
// exactly, or else the row with the longest dir/* that holds it.
func layerOf(layers []layer, p string) (layer, string, bool) {
	best, bestPattern, found := layer{}, "", false
	for _, l := range layers {
		for _, pattern := range l.patterns {
			if pattern == p {
				return l, pattern, true
			}
			if dir, ok := strings.CutSuffix(pattern, "/*"); ok && strings.HasPrefix(p, dir+"/") && len(pattern) > len(bestPattern) {
				best, bestPattern, found = l, pattern, true
			}
		}
	}
	return best, bestPattern, found
}
