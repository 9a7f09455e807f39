package measure

import (
	"encoding/json"
	"strconv"

	"extrapolate/internal/atomicfile"
	"extrapolate/internal/exit"
)

// Files of a run folder that are the run's own, not a measure's: the run writes them, and they
// are named here, below the registry, so that it refuses a measure that claims one.
const (
	ConfigFile = "config.yaml"
	LogFile    = "train_log.csv"
	// ResultsJSON is the results file, a Result: its presence marks the run finished.
	ResultsJSON    = "ppl_vs_len.json"
	CheckpointFile = "model.ckpt"
)

// RunOwnFiles are the files a run writes in its folder besides its measures': its config, its
// training log, its results and its checkpoint.
var RunOwnFiles = []string{ConfigFile, LogFile, ResultsJSON, CheckpointFile}

// CSVFloat writes a number for a CSV file, to 8 significant digits.
func CSVFloat(x float64) string { return strconv.FormatFloat(x, 'g', 8, 64) }

// WriteFile writes a results file whole or not at all, as every file of a run and a comparison
// is written.
func WriteFile(path string, b []byte) error { return atomicfile.WriteFile(path, b) }

// WriteJSON writes v as indented JSON and a newline, as every results file is.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteFile(path, append(b, '\n'))
}

// ErrInterrupted says a run stopped on request: in training, after saving a checkpoint; in
// evaluation, with nothing recorded. It is the commands' own (exit.ErrInterrupted), so that an
// error wrapping it exits with the status of an interrupted command.
var ErrInterrupted = exit.ErrInterrupted
