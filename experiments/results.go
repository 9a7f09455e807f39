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
	// Passkey holds passkey retrieval by length and depth, for a run trained with passkeys.
	Passkey []PasskeyResult `json:"passkey,omitempty"`

	// ByPosition is the loss by position at each length, written to its own files.
	ByPosition []PositionLoss `json:"-"`
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

func (r *Run) writeResults(res *Result, t *trainer) error {
	dir := r.Dir
	if err := writeFile(filepath.Join(dir, LogFile), logCSV(t.st.Log)); err != nil {
		return err
	}
	if len(res.ByPosition) > 0 {
		if err := writePositions(dir, res); err != nil {
			return err
		}
	}
	if len(res.Passkey) > 0 {
		if err := writePasskey(dir, res); err != nil {
			return err
		}
	}
	if len(res.Lengths) > 0 {
		curves := []curve{curveOf(res.Scheme+parenthesised(res.Scaling), []*Result{res})}
		if res.Unscaled != nil {
			curves = append(curves, curveOf("no scaling, same weights", []*Result{{Lengths: res.Unscaled}}))
		}
		if err := writePlot(dir, res.Name, res.TrainLen, curves); err != nil {
			return err
		}
		if err := writeFile(filepath.Join(dir, ResultsCSV), resultCSV(res)); err != nil {
			return err
		}
	}
	// The JSON goes last: its presence marks the run as finished.
	return writeJSON(filepath.Join(dir, ResultsJSON), res)
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

// lengthColumns and lengthRow are the columns of one length's result, as a run's ppl_vs_len.csv
// and cmd/eval's ppl_by_scaling.csv write them.
var lengthColumns = []string{"length", "ratio", "loss", "perplexity", "tokens", "applicable", "reason", "protocol"}

func lengthRow(l LengthResult, trainLen int, protocol string) []string {
	return []string{strconv.Itoa(l.Length), csvFloat(float64(l.Length) / float64(trainLen)), csvFloatOrEmpty(l.Loss), csvFloatOrEmpty(l.Perplexity),
		strconv.Itoa(l.Tokens), strconv.FormatBool(l.Applicable), l.Reason, protocol}
}

func resultCSV(res *Result) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	head := lengthColumns
	if res.Unscaled != nil {
		head = append(head[:len(head):len(head)], "unscaled_loss", "unscaled_perplexity")
	}
	w.Write(head)
	for i, l := range res.Lengths {
		row := lengthRow(l, res.TrainLen, res.Protocol)
		if res.Unscaled != nil {
			row = append(row, csvFloatOrEmpty(res.Unscaled[i].Loss), csvFloatOrEmpty(res.Unscaled[i].Perplexity))
		}
		w.Write(row)
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

// Summary is a short text of a run's results for the terminal.
func Summary(r *Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: scheme %s%s, %d params, %d steps in %.1fs (train loss %.3f, unigram entropy %.3f)\n",
		r.Name, r.Scheme, parenthesised(r.Scaling), r.Params, r.Steps, r.TrainSeconds, r.FinalTrainLoss, r.UnigramEntropy)
	fmt.Fprintf(&b, "%8s %6s %8s %10s", "length", "ratio", "loss", "perplexity")
	if r.Unscaled != nil {
		fmt.Fprintf(&b, " %20s", "perplexity unscaled")
	}
	b.WriteByte('\n')
	for i, l := range r.Lengths {
		ratio := float64(l.Length) / float64(r.TrainLen)
		if !l.Applicable {
			fmt.Fprintf(&b, "%8d %5gx %8s %10s  (%s)\n", l.Length, ratio, "n/a", "n/a", l.Reason)
			continue
		}
		if l.Perplexity == nil {
			loss := "-"
			if l.Loss != nil {
				loss = fmt.Sprintf("%.4f", *l.Loss)
			}
			fmt.Fprintf(&b, "%8d %5gx %8s %10s  (%s)\n", l.Length, ratio, loss, "-", l.Reason)
			continue
		}
		fmt.Fprintf(&b, "%8d %5gx %8.4f %10.3f", l.Length, ratio, *l.Loss, *l.Perplexity)
		if r.Unscaled != nil && r.Unscaled[i].Perplexity != nil {
			fmt.Fprintf(&b, " %20.3f", *r.Unscaled[i].Perplexity)
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "evaluated in %s\n", r.Protocol)
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	if len(r.Passkey) > 0 {
		b.WriteString(passkeyTable(r.Passkey, r.TrainLen))
	}
	return b.String()
}

func parenthesised(s string) string {
	if s == "" {
		return ""
	}
	return " " + s
}
