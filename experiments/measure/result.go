package measure

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Status is how a run ended: ok, or failed with the run's Error.
type Status string

const (
	OK     Status = "ok"
	Failed Status = "failed"
)

// OK says whether the run finished: only a finished run's numbers are compared.
func (r *Result) OK() bool { return r.Status == OK }

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
	Status         Status  `json:"status"`
	// ConfigHash is the SHA-256 of the resolved config: results of another config are stale.
	ConfigHash string `json:"config_sha256"`
	Error      string `json:"error,omitempty"`
	// Protocol says how the validation tokens were cut into windows: non-overlapping, or
	// sliding with eval.stride.
	Protocol string `json:"protocol"`
	// Phases lists, for a run trained in more than one phase (DroPE's steps without positions,
	// fine-tuning), what each phase was, in order; EvaluatedWith names the scheme the run was
	// evaluated with. Both are omitted for a run of one phase.
	Phases        []Phase        `json:"phases,omitempty"`
	EvaluatedWith string         `json:"evaluated_with,omitempty"`
	Lengths       []LengthResult `json:"lengths"`
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

// Phase is one phase of a run's training: its name (train, recalibrate, finetune), the
// scheme it trained with, and its first and last optimizer steps, counted from 1 over the
// whole run.
type Phase struct {
	Name      string `json:"name"`
	Scheme    string `json:"scheme"`
	FirstStep int    `json:"first_step"`
	LastStep  int    `json:"last_step"`
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

// Summary is a short text of a run's results for the terminal: what it trained, then each
// measure's lines (Summarizer).
func Summary(r *Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: scheme %s%s, %d params, %d steps in %.1fs (train loss %.3f, unigram entropy %.3f)\n",
		r.Name, r.Scheme, parenthesised(r.Scaling), r.Params, r.Steps, r.TrainSeconds, r.FinalTrainLoss, r.UnigramEntropy)
	if len(r.Phases) > 0 {
		b.WriteString(phasesLine(r))
	}
	for _, m := range All() {
		b.WriteString(SummaryOf(m, r))
	}
	return b.String()
}

// phasesLine says what each phase of a run of several trained with, and what evaluated it.
func phasesLine(r *Result) string {
	var parts []string
	for _, p := range r.Phases {
		parts = append(parts, fmt.Sprintf("%s steps %d-%d with %s", p.Name, p.FirstStep, p.LastStep, p.Scheme))
	}
	return fmt.Sprintf("phases: %s; evaluated with %s\n", strings.Join(parts, ", "), r.EvaluatedWith)
}

func parenthesised(s string) string {
	if s == "" {
		return ""
	}
	return " " + s
}
