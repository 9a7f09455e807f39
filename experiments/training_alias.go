package experiments

import (
	"context"
	"io"

	"extrapolate/experiments/config"
	"extrapolate/experiments/evaluate"
	"extrapolate/experiments/export"
	"extrapolate/experiments/training"
	"extrapolate/internal/writable"
	"extrapolate/position"
)

// A run, its checkpoints and one checkpoint under every scaling live in package training, below
// this one, which imports nothing of it; these are its names here, so that cmd/ and examples/
// import experiments alone.

// Run is one training run and its evaluation (training.Run).
type Run = training.Run

// Trained is a model loaded from a checkpoint, with the config that trained it.
type Trained = training.Trained

// LoadCheckpoint reads a checkpoint and rebuilds its model (training.LoadCheckpoint).
func LoadCheckpoint(path string) (*Trained, error) { return training.LoadCheckpoint(path) }

// ScalingReport is a checkpoint evaluated under several scalings.
type ScalingReport = evaluate.Report

// ScalingRequest is what an evaluation under several scalings was asked (evaluate.Request).
type ScalingRequest = evaluate.Request

// EvaluateScalings scores one trained model under each scaling (training.EvaluateScalings).
func EvaluateScalings(ctx context.Context, t *Trained, scalings []*position.Scaling, w io.Writer) (*ScalingReport, error) {
	return evaluate.Scalings(ctx, t, scalings, w)
}

// Variant is how a checkpoint's scheme is changed to evaluate it (training.Variant).
type Variant = evaluate.Variant

// NewVariant builds c's evaluation scheme with a scaling and a map, once, into the variant
// evaluation uses (training.NewVariant).
func NewVariant(c Config, sc *position.Scaling, m *position.DistanceMapConfig) (Variant, error) {
	return evaluate.NewVariant(c, sc, m)
}

// EvaluateVariants scores one trained model under each variant: a scaling, a distance map, both
// or neither (training.EvaluateVariants).
func EvaluateVariants(ctx context.Context, t *Trained, variants []Variant, w io.Writer) (*ScalingReport, error) {
	return evaluate.Variants(ctx, t, variants, w)
}

// Files of a scaling comparison.
const (
	ScalingsCSV  = evaluate.ScalingsCSV
	ScalingsJSON = evaluate.ScalingsJSON
	ScalingsPNG  = evaluate.ScalingsPNG
	ScalingsSVG  = evaluate.ScalingsSVG

	TaskScalingsCSV = evaluate.TaskScalingsCSV
	TaskScalingsPNG = evaluate.TaskScalingsPNG
	TaskScalingsSVG = evaluate.TaskScalingsSVG
)

// CheckWritable checks that dir, or the nearest folder above it that exists, takes a new file,
// so that a command can refuse an output folder before it spends time on work it could not save
// (writable.Check).
func CheckWritable(dir string) error { return writable.Check(dir) }

// Export is a trained model as safetensors weights and a JSON config (training.Export).
type Export = export.Files

// Untrained is the model a config trains, before its first step (training.Untrained).
func Untrained(r *config.Resolved) (*Trained, error) { return training.Untrained(r) }

// NewExport makes the export of a trained model (training.NewExport).
func NewExport(t *Trained) (*Export, error) { return export.New(t) }

// Imported is an export read back into a model, to be written as a checkpoint
// (training.Imported).
type Imported = export.Imported

// Import reads an export's config.json and model.safetensors back into a model (training.Import).
func Import(dir string) (*Imported, error) { return export.Import(dir) }

// Files of an export.
const (
	ExportWeights = export.WeightsFile
	ExportConfig  = export.ConfigFile
)
