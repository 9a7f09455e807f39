package experiments

import (
	"bytes"
	"encoding/csv"
	"extrapolate/experiments/measure"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// writeResults writes a run's training log, each measure's files and what the results file
// keeps of it, and the results file last: its presence marks the run as finished.
func (r *Run) writeResults(res *Result, t *trainer, recs []measure.Recorder) error {
	if err := measure.WriteFile(filepath.Join(r.Dir, LogFile), logCSV(t.st.Log)); err != nil {
		return err
	}
	for _, rec := range recs {
		if err := rec.Record(r.Dir, res); err != nil {
			return err
		}
	}
	return measure.WriteJSON(filepath.Join(r.Dir, ResultsJSON), res)
}

func logCSV(rows []LogRow) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"step", "phase", "loss", "lr", "grad_norm", "tokens_per_s", "seconds"})
	for _, r := range rows {
		w.Write([]string{strconv.Itoa(r.Step), r.Phase, measure.CSVFloat(r.Loss), measure.CSVFloat(r.LR), measure.CSVFloat(r.GradNorm), measure.CSVFloat(r.TokensPerSec), measure.CSVFloat(r.Seconds)})
	}
	w.Flush()
	return b.Bytes()
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
