package experiments

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"extrapolate/internal/atomicfile"
)

// Result is what a run found.
type Result struct {
	Name    string `json:"name"`
	Scheme  string `json:"scheme"`
	Scaling string `json:"scaling,omitempty"`
	Seed    uint64 `json:"seed"`
	// TrainLen is the training length; lengths are also given as multiples of it.
	TrainLen  int    `json:"train_len"`
	Corpus    string `json:"corpus"`
	GoVersion string `json:"go_version"`
	// CPU is the processor the run was made on, as /proc/cpuinfo names it.
	CPU string `json:"cpu,omitempty"`
	// UnigramEntropy is the loss of a model that ignores context, in nats per token.
	UnigramEntropy float64 `json:"unigram_entropy"`
	Params         int     `json:"params"`
	Steps          int     `json:"steps"`
	TrainSeconds   float64 `json:"train_seconds"`
	EvalSeconds    float64 `json:"eval_seconds"`
	FinalTrainLoss float64 `json:"final_train_loss"`
	Status         string  `json:"status"` // ok or failed
	// ConfigHash is the SHA-256 of the resolved config: results of another config are stale.
	ConfigHash string `json:"config_sha256"`
	Error      string `json:"error,omitempty"`
	// Protocol says how the validation tokens were cut into windows: non-overlapping, or
	// sliding with eval.stride.
	Protocol string         `json:"protocol"`
	Lengths  []LengthResult `json:"lengths"`
	// Unscaled holds, for a run with a RoPE scaling, the same weights evaluated without it.
	Unscaled []LengthResult `json:"unscaled,omitempty"`
	// Warnings lists what the numbers cannot show, one line each: lengths whose loss was not
	// finite.
	Warnings []string `json:"warnings,omitempty"`

	// Measured holds what measures keep in the results file besides the perplexity above, each
	// under its own name (passkey retrieval), as JSON; SetMeasurement and Measurement write and
	// read it. The file has them after the fields above, in the order the measures registered.
	Measured map[string]json.RawMessage `json:"-"`
}

// LengthResult is the score at one evaluation length.
type LengthResult struct {
	Length int `json:"length"`
	// Applicable is false when the scheme cannot handle the length by design; Reason says why.
	Applicable bool   `json:"applicable"`
	Reason     string `json:"reason,omitempty"`
	// NonFinite says that the loss or perplexity came out NaN or infinite (float32 overflow):
	// they are null, as for a length that is not applicable, and Reason says which.
	NonFinite  bool     `json:"nonfinite,omitempty"`
	Loss       *float64 `json:"loss"`
	Perplexity *float64 `json:"perplexity"`
	Tokens     int      `json:"tokens"`
}

// At returns the result at length n, if there is one.
func (r *Result) At(n int) (LengthResult, bool) {
	for _, l := range r.Lengths {
		if l.Length == n {
			return l, true
		}
	}
	return LengthResult{}, false
}

// writeResults writes a run's training log, each measure's files and what the results file
// keeps of it, and the results file last: its presence marks the run as finished.
func (r *Run) writeResults(res *Result, t *trainer, recs []Recorder) error {
	if err := writeFile(filepath.Join(r.Dir, LogFile), logCSV(t.st.Log)); err != nil {
		return err
	}
	for _, rec := range recs {
		if err := rec.Record(r.Dir, res); err != nil {
			return err
		}
	}
	return writeJSON(filepath.Join(r.Dir, ResultsJSON), res)
}

func logCSV(rows []LogRow) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"step", "phase", "loss", "lr", "grad_norm", "tokens_per_s", "seconds"})
	for _, r := range rows {
		w.Write([]string{strconv.Itoa(r.Step), r.Phase, csvFloat(r.Loss), csvFloat(r.LR), csvFloat(r.GradNorm), csvFloat(r.TokensPerSec), csvFloat(r.Seconds)})
	}
	w.Flush()
	return b.Bytes()
}

// csvFloat writes a number for a CSV file, to 8 significant digits.
func csvFloat(x float64) string { return strconv.FormatFloat(x, 'g', 8, 64) }

// csvFloatOrEmpty is csvFloat, or empty for a missing number.
func csvFloatOrEmpty(x *float64) string {
	if x == nil {
		return ""
	}
	return csvFloat(*x)
}

func writeFile(path string, b []byte) error { return atomicfile.WriteFile(path, b) }

// WriteFile writes a results file whole or not at all, as every file of a run and a comparison
// is written: a measure of another package writes its files with it.
func WriteFile(path string, b []byte) error { return writeFile(path, b) }

// writeJSON writes v as indented JSON and a newline, as every results file is.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(path, append(b, '\n'))
}

// readIfExists reads a file; nil and no error when there is none.
func readIfExists(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// describeDiff names the config fields that differ between two resolved configs.
func describeDiff(a, b []byte) string {
	fa, fb := map[string]string{}, map[string]string{}
	var na, nb yaml.Node
	if yaml.Unmarshal(a, &na) != nil || yaml.Unmarshal(b, &nb) != nil {
		return "the configs differ"
	}
	flatten(&na, "", fa)
	flatten(&nb, "", fb)
	keys := map[string]bool{}
	for k := range fa {
		keys[k] = true
	}
	for k := range fb {
		keys[k] = true
	}
	var diffs []string
	for k := range keys {
		if fa[k] != fb[k] {
			diffs = append(diffs, fmt.Sprintf("%s: %s there, %s here", k, orNone(fa[k]), orNone(fb[k])))
		}
	}
	if len(diffs) == 0 {
		return "the configs differ"
	}
	sort.Strings(diffs)
	// A config written by hand differs in every field it leaves out: a few name the difference.
	if len(diffs) > 5 {
		return fmt.Sprintf("%s; and %d more fields", strings.Join(diffs[:5], "; "), len(diffs)-5)
	}
	return strings.Join(diffs, "; ")
}

func orNone(s string) string {
	if s == "" {
		return "unset"
	}
	return s
}

func flatten(n *yaml.Node, prefix string, out map[string]string) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			flatten(c, prefix, out)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			flatten(n.Content[i+1], prefix+n.Content[i].Value+".", out)
		}
	case yaml.SequenceNode:
		var parts []string
		for _, c := range n.Content {
			parts = append(parts, c.Value)
		}
		out[strings.TrimSuffix(prefix, ".")] = "[" + strings.Join(parts, ",") + "]"
	default:
		out[strings.TrimSuffix(prefix, ".")] = n.Value
	}
}

// Summary is a short text of a run's results for the terminal: what it trained, then each
// measure's lines (Summarizer).
func Summary(r *Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: scheme %s%s, %d params, %d steps in %.1fs (train loss %.3f, unigram entropy %.3f)\n",
		r.Name, r.Scheme, parenthesised(r.Scaling), r.Params, r.Steps, r.TrainSeconds, r.FinalTrainLoss, r.UnigramEntropy)
	for _, m := range Measures() {
		if s, ok := m.(Summarizer); ok {
			b.WriteString(s.Summary(r))
		}
	}
	return b.String()
}

func parenthesised(s string) string {
	if s == "" {
		return ""
	}
	return " " + s
}
