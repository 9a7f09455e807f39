package measure

import (
	"context"
	"extrapolate/experiments/config"
	"io"

	"extrapolate/data"
	"extrapolate/model"
	"extrapolate/position"
)

// A Measure is one thing measured of a trained model and reported across a comparison:
// perplexity by length, loss by position, passkey retrieval, attention diagnostics. It
// registers by name (Register), from any package, and acts through the optional
// interfaces below, implementing only those for the places where it acts, as a position scheme
// does: Selector (which runs it measures), Starter (what it does in a run), Summarizer (its lines
// of a run's summary) and Reporter (its section of a comparison's report).
type Measure interface {
	// Name is the name eval.measures and the registry know it by.
	Name() string
	// Files are the files it writes in a run folder. They are the run's: a fresh start removes
	// them, so that a measure no longer asked for leaves no stale file behind, and a folder
	// check refuses to replace them when they belong to another config.
	Files() []string
}

// Selector is a measure that measures some runs without eval.measures naming it: perplexity and
// loss by position measure every run, passkey retrieval every run trained with passkeys. A
// measure without it measures only the runs whose eval.measures name it.
type Selector interface {
	Selects(c config.Config) bool
}

// Starter is a measure that measures a run: Start is called once the model is trained, and
// what it returns observes the protocol's pass (PassObserver), evaluates on its own (Evaluator),
// or both, and then records what it found (Recorder).
type Starter interface {
	Start(ev *Evaluation) (Recorder, error)
}

// Recorder is what a measure found in one run.
type Recorder interface {
	// Record writes the measure's files into the run folder dir and may add to res what the
	// run's results file keeps of it (Result.SetMeasurement). It runs after every measure has
	// evaluated, and before the results file, whose presence marks the run finished, is
	// written.
	Record(dir string, res *Result) error
}

// PassObserver is a Recorder that takes its numbers from the protocol's forward pass over the
// evaluation windows, which every measure of a run shares: observing it costs no pass of its
// own.
type PassObserver interface {
	// Length begins evaluation length n. What it returns sees the length's batches, then its
	// end; nil sees nothing of this length.
	Length(n int) LengthObserver
}

// GraphOptioner is a PassObserver that needs the pass's graphs built with options, such as the
// attention statistics. Options that change no number are all a measure may ask for: the
// other measures share the graph.
type GraphOptioner interface {
	GraphOptions(o *model.Options)
}

// LengthObserver sees the protocol's pass at one evaluation length.
type LengthObserver interface {
	// Batch sees one batch just run. g's first len(ws) sequences are the windows ws, in order;
	// any sequences after them repeat the last window to fill the batch, and are not scored.
	// losses holds each target's loss at b·n+t, the window's scored targets being the last
	// ws[b].Score of its n.
	Batch(g *model.Graph, ws []data.Window, losses []float64)
	// End ends the length, with its score: not applicable, not finite, or scored.
	End(l PassLength)
}

// PassLength is the protocol's pass at one evaluation length, as it ended.
type PassLength struct {
	LengthResult
	// Sum and Count hold, by position in the window, the summed loss of the targets scored
	// there and how many were; nil unless the length was scored with a finite loss.
	Sum   []float64
	Count []int
}

// Evaluator is a Recorder that evaluates the model on its own: passkey retrieval on documents
// of its own, perplexity once more without the RoPE scaling. It runs after the shared pass.
type Evaluator interface {
	Evaluate(ctx context.Context) error
}

// Summarizer is a measure with lines in a run's summary for the terminal, from its result.
type Summarizer interface {
	Summary(res *Result) string
}

// Reporter is a measure with a section in a comparison's report.
type Reporter interface {
	// Section aggregates the comparison's runs over seeds; nil when no run has the measure. It
	// reads what it needs of each run's files, and checks it: a file a finished run it measured
	// must have written that is missing, does not read or holds what the run cannot have
	// written is its error, naming the file. Every section is made before the report writes
	// anything, and its error is the input's fault (exit status 2): Write reads nothing.
	Section(rep *Report) (Section, error)
}

// GridReporter is a Reporter with a section in a grid's report too, across its points: how what
// it measures moves with the points' settings (FIRE's threshold with the training length). Its
// section is made, like a point's, before the grid writes anything.
type GridReporter interface {
	GridSection(points []GridPoint) (Section, error)
}

// GridPoint is one point of a comparison's grid as a GridReporter reads it: its name and its
// runs, aggregated.
type GridPoint struct {
	Name   string
	Report *Report
}

// Section is a measure's part of a comparison: its files beside REPORT.md, and its markdown.
type Section interface {
	// Write writes the section's tables and figures into the comparison's folder.
	Write(dir string) error
	// Markdown writes the section of REPORT.md.
	Markdown(w io.Writer)
}

// Evaluation is a trained model under evaluation, as measures see it.
type Evaluation struct {
	// Resolved is the run's config, resolved, with the evaluation section it is scored at: its
	// tasks, for a run trained on tasks, and the held-out examples scored at each size
	// (Resolved.Tasks).
	Resolved *config.Resolved
	Model    *model.Model
	// Scheme is the scheme the model is evaluated with; TrainScheme that of the main training
	// phase, without the RoPE scaling.
	Scheme, TrainScheme position.Scheme
	Corpus              *data.Corpus
	// Progress receives progress bars; nil is silent.
	Progress io.Writer
}

// Config is the evaluated run's config (Resolved.Config).
func (ev *Evaluation) Config() config.Config { return ev.Resolved.Config() }
