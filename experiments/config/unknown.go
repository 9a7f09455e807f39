package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Unknown says, for a config argument that names no file, which of the configs in Dir it may
// have meant, and lists them: a newcomer's misspelling gets the nearest name, not a bare "no
// such file". It returns nil when the file the argument resolves to exists, or for a path, whose
// error the reader gives.
func Unknown(arg string) error {
	path := Resolve(arg)
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) || !IsBareName(arg) {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(Dir, "*.yaml"))
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".yaml"))
	}
	slices.Sort(names)
	if len(names) == 0 {
		return fmt.Errorf("%s: no such config, and no configs in %s/ (run from the repository's root)", path, Dir)
	}
	name := strings.TrimSuffix(arg, ".yaml")
	best := names[0]
	for _, n := range names[1:] {
		if editDistance(name, n) < editDistance(name, best) {
			best = n
		}
	}
	return fmt.Errorf("%s: no such config; the nearest is %s (configs: %s)", path, best, strings.Join(names, ", "))
}

// editDistance is the Levenshtein distance between a and b, by bytes: the insertions, deletions
// and substitutions that turn one into the other.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
