// Package data provides the corpora, the byte-level tokenizer and the batches a model is
// trained and evaluated on.
package data

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"extrapolate/internal/inputfile"
)

// Vocab is the size of the byte-level vocabulary: every byte is a token, so any file can be
// read and no token is unknown.
const Vocab = 256

// Config is the data section of a run's config.
type Config struct {
	// Corpus is gosrc (the default: a fixed list of Go standard library packages, no download)
	// or text (the file at Path).
	Corpus string `yaml:"corpus"`
	// Path is the text corpus's file.
	Path string `yaml:"path,omitempty"`
}

// Corpus is a text split into a training and a validation part.
type Corpus struct {
	Name         string
	Train, Valid []byte
	// Source says where the text came from: the Go version and file count for gosrc, the
	// path for text.
	Source string
	Files  int
}

// GoPackages are the packages of the Go standard library the gosrc corpus reads, in order.
var GoPackages = []string{
	"bufio", "bytes", "strings", "strconv", "sort", "fmt", "errors", "io", "path", "path/filepath",
	"unicode/utf8", "container/list", "container/heap", "encoding/json", "encoding/binary",
	"encoding/base64", "encoding/csv", "net/url", "text/template", "text/template/parse",
	"text/tabwriter", "text/scanner", "regexp", "regexp/syntax", "math", "math/big", "flag", "time",
	"compress/flate", "archive/tar", "go/ast", "go/parser", "go/scanner", "go/token", "go/printer",
	"go/format",
}

// ValidEvery puts every ValidEvery-th file (or the last tenth of a single text) in validation.
const ValidEvery = 10

// Check reports the first field of the data section that makes no sense, without reading
// anything.
func (c Config) Check() error {
	switch c.Corpus {
	case "", "gosrc":
		if c.Path != "" {
			return fmt.Errorf("data.path: the gosrc corpus takes no path (use corpus: text)")
		}
	case "text":
		if c.Path == "" {
			return fmt.Errorf("data.path: the text corpus needs a file path")
		}
	default:
		return fmt.Errorf("data.corpus: unknown corpus %q (known: gosrc, text)", c.Corpus)
	}
	return nil
}

// Load reads the corpus a config names.
func Load(c Config) (*Corpus, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if c.Corpus == "text" {
		return loadText(c.Path)
	}
	return loadGoSource()
}

// GoRoot returns the root of the Go installation whose sources gosrc reads, and its version.
var GoRoot = sync.OnceValues(goRoot)

func goRoot() (root, version string) {
	root = os.Getenv("GOROOT")
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		if r := strings.TrimSpace(string(out)); r != "" {
			root = r
		}
	}
	version = runtime.Version()
	if b, err := os.ReadFile(filepath.Join(root, "VERSION")); err == nil {
		version, _, _ = strings.Cut(string(b), "\n")
	}
	return root, version
}

// loadGoSource reads the non-test .go files of GoPackages, package by package in order and by
// name within a package, putting every tenth file in validation.
func loadGoSource() (*Corpus, error) {
	root, version := GoRoot()
	var files []string
	for _, p := range GoPackages {
		dir := filepath.Join(root, "src", filepath.FromSlash(p))
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("data: gosrc corpus: %w (is Go installed, with its sources?)", err)
		}
		var names []string
		for _, e := range entries {
			n := e.Name()
			if e.Type().IsRegular() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			files = append(files, filepath.Join(dir, n))
		}
	}
	c := &Corpus{Name: "gosrc", Files: len(files), Source: fmt.Sprintf("%s standard library, %d files of %d packages", version, len(files), len(GoPackages))}
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("data: gosrc corpus: %w", err)
		}
		if i%ValidEvery == ValidEvery-1 {
			c.Valid = append(c.Valid, b...)
		} else {
			c.Train = append(c.Train, b...)
		}
	}
	if len(c.Valid) == 0 || len(c.Train) == 0 {
		return nil, fmt.Errorf("data: gosrc corpus under %s is empty", root)
	}
	return c, nil
}

// MaxTextBytes bounds a text corpus. The whole text is held in memory, and a corpus this
// trainer can use in reasonable time is far smaller.
const MaxTextBytes = 1 << 30

// loadText reads a text file, the first nine tenths for training and the rest for validation.
func loadText(path string) (*Corpus, error) {
	b, err := inputfile.ReadFile(path, MaxTextBytes)
	if err != nil {
		return nil, fmt.Errorf("data.path: %w", err)
	}
	if len(b) == 0 {
		return nil, fmt.Errorf("data.path: %s is empty", path)
	}
	if at, ok := isText(b); !ok {
		return nil, fmt.Errorf("data.path: %s does not look like text from byte %d on (NUL bytes or mostly invalid UTF-8)", path, at)
	}
	cut := len(b) - len(b)/ValidEvery
	return &Corpus{Name: "text", Train: b[:cut], Valid: b[cut:], Source: path, Files: 1}, nil
}

// textBlock is the span isText judges at a time: small enough that a binary part of a file
// cannot hide among text, large enough that a few stray bytes do not condemn it.
const textBlock = 1 << 16

// isText reports whether every block of textBlock bytes of b (the last one ending at the end of
// b) has no NUL byte and is mostly valid UTF-8: a binary file, or text with binary data appended,
// is almost certainly a mistake for a language-model corpus. When it is not, it returns the
// offset of the first block that is not text.
func isText(b []byte) (at int, ok bool) {
	for start := 0; start < len(b); start += textBlock {
		end := start + textBlock
		if end > len(b) {
			// The last block is the last textBlock bytes, so that a short tail is judged on
			// as many bytes as any other block.
			end, start = len(b), max(0, len(b)-textBlock)
		}
		if !isTextBlock(b[start:end]) {
			return start, false
		}
	}
	return 0, true
}

// isTextBlock reports whether b has no NUL byte and at most one byte in twenty that is not
// part of valid UTF-8.
func isTextBlock(b []byte) bool {
	if bytes.IndexByte(b, 0) >= 0 {
		return false
	}
	bad := 0
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			bad++
		}
		i += n
	}
	return bad*20 < len(b)
}

// UnigramEntropy is the entropy, in nats per token, of the training text's byte frequencies:
// the loss of a model that ignores context. A model that learns anything beats it.
func (c *Corpus) UnigramEntropy() float64 {
	var counts [Vocab]float64
	for _, b := range c.Train {
		counts[b]++
	}
	n := float64(len(c.Train))
	h := 0.0
	for _, k := range counts {
		if k > 0 {
			h -= k / n * math.Log(k/n)
		}
	}
	return h
}
