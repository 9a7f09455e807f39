package training

import (
	"bytes"
	"encoding/csv"
	"path/filepath"
	"strconv"

	"extrapolate/experiments/measure"
)

// writeResults writes a run's training log, each measure's files and what the results file
// keeps of it, and the results file last: its presence marks the run as finished.
func (r *Run) writeResults(res *measure.Result, t *trainer, recs []measure.Recorder) error {
	if err := measure.WriteFile(filepath.Join(r.Dir, measure.LogFile), logCSV(t.st.Log)); err != nil {
		return err
	}
	for _, rec := range recs {
		if err := rec.Record(r.Dir, res); err != nil {
			return err
		}
	}
	return measure.WriteJSON(filepath.Join(r.Dir, measure.ResultsJSON), res)
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
