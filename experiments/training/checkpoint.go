package training

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"

	"gorgonia.org/tensor"

	"extrapolate/checkpoint"
	"extrapolate/data"
	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
	"extrapolate/internal/strictyaml"
	"extrapolate/model"
	"extrapolate/position"
)

// Trained is a model loaded from a checkpoint, with the config that trained it.
type Trained struct {
	// Resolved is the config that trained the model, resolved: the schemes it was built with.
	// A change to it is a new Trained (WithEval, WithExamples).
	Resolved *config.Resolved
	Model    *model.Model
	// Finished is false for a checkpoint saved in the middle of training.
	Finished bool
	// Progress says, for an unfinished checkpoint, how far training went: "train step 50 of
	// 200", "recalibrate step 7 of 25" or "finetune step 3 of 10".
	Progress string
	// Checksum is the SHA-256 checksum closing the file, in hex, checked against what was
	// loaded: it names the checkpoint's content, whatever its path.
	Checksum string
}

// LoadCheckpoint reads a checkpoint and rebuilds its model. The config inside must decode and
// check like a config file, and every weight must match the shape that config gives it.
func LoadCheckpoint(path string) (*Trained, error) {
	meta, byName, sum, err := readCheckpointSum(path)
	if err != nil {
		return nil, err
	}
	rc, err := meta.config(path)
	if err != nil {
		return nil, err
	}
	c := rc.Config()
	trainScheme, _ := rc.Schemes()
	if err := meta.checkScheme(trainScheme, path); err != nil {
		return nil, err
	}
	// Compare the shapes the config gives the weights with the file's before building the
	// model, so a crafted config cannot make it allocate what the file does not hold.
	shapes, err := model.Shapes(rc.ModelConfig(), trainScheme)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, s := range shapes {
		x, ok := byName[s.Name]
		if !ok {
			return nil, fmt.Errorf("%s: the checkpoint has no weight %s that its config's model needs", path, s.Name)
		}
		if !x.Shape().Eq(tensor.Shape(s.Dims)) {
			return nil, fmt.Errorf("%s: weight %s has shape %v, its config gives it %v", path, s.Name, x.Shape(), s.Dims)
		}
	}
	m, err := newModel(rc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := loadParams(m, byName, path); err != nil {
		return nil, err
	}
	tr := &Trained{Resolved: rc, Model: m, Finished: meta.State.Phase == phaseDone, Checksum: hex.EncodeToString(sum[:])}
	if !tr.Finished {
		steps := c.Train.MainSteps()
		switch f := c.Train.Finetune; {
		case meta.State.Phase == phaseRecalibrate:
			steps = c.Train.DroppedSteps()
		case meta.State.Phase == phaseFinetune && f != nil:
			steps = f.Steps
		}
		tr.Progress = fmt.Sprintf("%s step %d of %d", meta.State.Phase, meta.State.Step, steps)
	}
	return tr, nil
}

// config decodes and resolves the config a checkpoint holds, as a config file's.
func (m Meta) config(path string) (*config.Resolved, error) {
	where := path + " (its config)"
	root, err := strictyaml.Parse(where, []byte(m.Config))
	if err != nil {
		return nil, err
	}
	return config.Decode(where, root, nil)
}

// Meta is the header of a checkpoint this program writes.
type Meta struct {
	Program string `json:"program"`
	// Config is the run's resolved config, as YAML.
	Config    string     `json:"config"`
	Tokenizer Tokenizer  `json:"tokenizer"`
	State     trainState `json:"state"`
	// Scheme is the position scheme the config built, as JSON: its fields with the defaults
	// filled in. A default can change between versions of this program (T5's scale and FIRE's
	// threshold did); the config alone would then rebuild a different scheme for the same
	// weights. Absent in checkpoints written before it was recorded.
	Scheme json.RawMessage `json:"scheme,omitempty"`
	// Imported says where a checkpoint cmd/import made came from (ImportRecord); absent in one
	// train wrote.
	Imported *ImportRecord `json:"imported,omitempty"`
}

// schemeJSON records a scheme's settings.
func schemeJSON(s position.Scheme) json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil {
		return nil // a scheme of another package with fields JSON cannot hold: not recorded
	}
	return b
}

// checkScheme refuses a checkpoint whose recorded scheme differs from the one its config builds
// now. The record is read onto the scheme built now, so that a field added since keeps its
// value and only a field recorded with another value counts.
func (m Meta) checkScheme(s position.Scheme, path string) error {
	now := schemeJSON(s)
	if len(m.Scheme) == 0 || now == nil || bytes.Equal(m.Scheme, now) {
		return nil
	}
	then := reflect.New(reflect.TypeOf(s))
	then.Elem().Set(reflect.ValueOf(s))
	if json.Unmarshal(m.Scheme, then.Interface()) == nil && bytes.Equal(schemeJSON(then.Elem().Interface().(position.Scheme)), now) {
		return nil
	}
	return fmt.Errorf("%s: its weights were trained with the %s scheme as %s, but its config now builds %s (a default changed): set those fields in a config and train again", path, s.Name(), m.Scheme, now)
}

// Tokenizer describes the tokenizer a checkpoint was trained with.
type Tokenizer struct {
	Kind  string `json:"kind"`
	Vocab int    `json:"vocab"`
}

// Program names this program in a checkpoint's header, and in an export's.
const Program = "extrapolate"

var byteTokenizer = Tokenizer{Kind: "byte", Vocab: data.Vocab}

// ByteTokenizer is the tokenizer this program trains with, as a checkpoint's header records it,
// and an export's config.
func ByteTokenizer() Tokenizer { return byteTokenizer }

// restore loads a checkpoint of the same config into the trainer.
func (t *trainer) restore(path string) error {
	meta, byName, err := readCheckpoint(path)
	if err != nil {
		return fmt.Errorf("resuming: %w (use -overwrite to start afresh)", err)
	}
	want := string(t.run.config().Marshal())
	if meta.Config != want {
		return fmt.Errorf("resuming: %s was written by a different config (%s); use -overwrite to start afresh", path, describeDiff([]byte(meta.Config), []byte(want)))
	}
	trainScheme, _ := t.run.Resolved.Schemes()
	if err := meta.checkScheme(trainScheme, path); err != nil {
		return fmt.Errorf("resuming: %w (or use -overwrite to start afresh)", err)
	}
	return t.adopt(meta, byName, path)
}

// share takes the weights, optimizer state and log of a finished run whose training is the
// same as this one's.
func (t *trainer) share(path string) error {
	meta, byName, err := readCheckpoint(path)
	if err != nil {
		return err
	}
	other, err := meta.config(path)
	if err != nil {
		return err
	}
	if meta.State.Phase != phaseDone || Key(other.Config()) != Key(t.run.config()) {
		return fmt.Errorf("%s: not a finished run with the same training as %s", path, t.run.config().Name)
	}
	trainScheme, _ := t.run.Resolved.Schemes()
	if err := meta.checkScheme(trainScheme, path); err != nil {
		return err
	}
	return t.adopt(meta, byName, path)
}

// Key is the part of a config that decides the trained weights: everything but the name, the
// evaluation and the RoPE scaling. A run that fine-tunes has none: its scaling shapes its
// weights. It is here, beside share which checks it: a comparison's runner (which run trains,
// which shares) and its report (whose training each run took) ask it too.
func Key(c config.Config) string {
	if c.Train.Finetune != nil {
		return ""
	}
	c = c.MainPhase()
	c.Name = ""
	c.Eval = config.Eval{}
	return string(c.Marshal())
}

// readCheckpoint reads a checkpoint of this program: its header and its tensors by name.
func readCheckpoint(path string) (Meta, map[string]*tensor.Dense, error) {
	meta, byName, _, err := readCheckpointSum(path)
	return meta, byName, err
}

// readCheckpointSum is readCheckpoint that also returns the checksum closing the file.
func readCheckpointSum(path string) (Meta, map[string]*tensor.Dense, [sha256.Size]byte, error) {
	var meta Meta
	ts, sum, err := checkpoint.ReadSum(path, &meta)
	if err != nil {
		return meta, nil, sum, err
	}
	if err := checkMeta(meta, path); err != nil {
		return meta, nil, sum, err
	}
	byName := map[string]*tensor.Dense{}
	for _, x := range ts {
		byName[x.Name] = x.Value
	}
	return meta, byName, sum, nil
}

// adopt copies a checkpoint's weights, optimizer moments and training state into the trainer.
// A finished run's checkpoint holds no moments (save): nothing trains after it.
func (t *trainer) adopt(meta Meta, byName map[string]*tensor.Dense, path string) error {
	if err := loadParams(t.model, byName, path); err != nil {
		return err
	}
	if meta.State.Phase != phaseDone {
		if err := t.adoptMoments(byName, path); err != nil {
			return err
		}
	}
	t.st = meta.State
	t.opt.Step = meta.State.OptStep
	t.sampler.Generator().State = meta.State.Sampler
	if s := meta.State.PositionIDs; s != nil {
		t.positionRng.State = *s
	}
	return nil
}

// adoptMoments copies AdamW's moments of every weight from a checkpoint into the optimizer.
func (t *trainer) adoptMoments(byName map[string]*tensor.Dense, path string) error {
	for i, p := range t.model.Params {
		m, v := byName["adam.m."+p.Name], byName["adam.v."+p.Name]
		if m == nil || v == nil || !m.Shape().Eq(p.Value.Shape()) || !v.Shape().Eq(p.Value.Shape()) || m.Dtype() != p.Value.Dtype() || v.Dtype() != p.Value.Dtype() {
			return fmt.Errorf("%s: optimizer state for %s is missing or misshapen", path, p.Name)
		}
		copy(t.opt.M[i].Raw, m.Raw)
		copy(t.opt.V[i].Raw, v.Raw)
	}
	return nil
}

func checkMeta(meta Meta, path string) error {
	switch meta.State.Phase {
	case phaseTrain, phaseRecalibrate, phaseFinetune, phaseDone:
	default:
		return fmt.Errorf("%s: unknown training phase %q", path, meta.State.Phase)
	}
	if meta.State.Step < 0 || meta.State.OptStep < 0 {
		return fmt.Errorf("%s: negative step in the training state", path)
	}
	if meta.Program != Program {
		return fmt.Errorf("%s: not a checkpoint of this program (program %q)", path, meta.Program)
	}
	if meta.Tokenizer != byteTokenizer {
		return fmt.Errorf("%s: tokenizer %s with %d tokens, this program uses %s with %d", path, meta.Tokenizer.Kind, meta.Tokenizer.Vocab, byteTokenizer.Kind, byteTokenizer.Vocab)
	}
	return nil
}

// loadParams copies checkpoint tensors into the model's weights, saying exactly what differs
// when the names, shapes or dtypes do not match.
func loadParams(m *model.Model, byName map[string]*tensor.Dense, path string) error {
	for _, p := range m.Params {
		x, ok := byName[p.Name]
		if !ok {
			return fmt.Errorf("%s: the checkpoint has no weight %s that the config's model needs", path, p.Name)
		}
		if !x.Shape().Eq(p.Value.Shape()) {
			return fmt.Errorf("%s: weight %s has shape %v in the checkpoint, the config's model needs %v", path, p.Name, x.Shape(), p.Value.Shape())
		}
		if x.Dtype() != p.Value.Dtype() {
			return fmt.Errorf("%s: weight %s is %v in the checkpoint, the model is %v", path, p.Name, x.Dtype(), p.Value.Dtype())
		}
		copy(p.Value.Raw, x.Raw)
	}
	return nil
}

// save writes the checkpoint: the weights and the training state, and, while training is not
// finished, AdamW's moments, which resuming needs. A finished run's checkpoint is for
// evaluating, sampling, exporting and sharing its weights with runs of the same training, none
// of which trains further: without the moments it is a third of the size.
func (t *trainer) save() error {
	var ts []checkpoint.Tensor
	for _, p := range t.model.Params {
		ts = append(ts, checkpoint.Tensor{Name: p.Name, Value: p.Value})
	}
	if t.st.Phase != phaseDone {
		for i, p := range t.model.Params {
			ts = append(ts, checkpoint.Tensor{Name: "adam.m." + p.Name, Value: t.opt.M[i]}, checkpoint.Tensor{Name: "adam.v." + p.Name, Value: t.opt.V[i]})
		}
	}
	t.st.OptStep = t.opt.Step
	t.st.Sampler = t.sampler.Generator().State
	if t.run.Resolved.PositionIDs() != nil {
		s := t.positionRng.State
		t.st.PositionIDs = &s
	}
	trainScheme, _ := t.run.Resolved.Schemes()
	meta := Meta{Program: Program, Config: string(t.run.config().Marshal()), Tokenizer: byteTokenizer, State: t.st, Scheme: schemeJSON(trainScheme)}
	return checkpoint.Write(filepath.Join(t.run.Dir, measure.CheckpointFile), meta, ts)
}

// Config is the config that trained the model (Resolved.Config).
func (t *Trained) Config() config.Config { return t.Resolved.Config() }

// WithExamples is t scored on n held-out examples a size in place of its config's
// task.examples: a new value, its config resolved again, t unchanged. t must be trained on
// tasks.
func (t *Trained) WithExamples(n int) (*Trained, error) { return t.with(t.Resolved.WithExamples(n)) }

// WithEval is t evaluated as e says in place of its config's eval section: a new value, its
// config resolved again (the lengths and the memory checked), t unchanged.
func (t *Trained) WithEval(e config.Eval) (*Trained, error) { return t.with(t.Resolved.WithEval(e)) }

// with is t with the config rc, resolved from its own, or err.
func (t *Trained) with(rc *config.Resolved, err error) (*Trained, error) {
	if err != nil {
		return nil, err
	}
	u := *t
	u.Resolved = rc
	return &u, nil
}

// CheckpointConfig is the config a finished checkpoint was trained with, resolved, and the same
// with the overrides applied over it: what a comparison evaluates a model trained elsewhere
// with (an imported one, or another comparison's), and what it checks that against. The file
// is read once. A checkpoint saved before its training finished is refused.
func CheckpointConfig(path string, overrides []config.Override) (trained, overridden *config.Resolved, err error) {
	meta, _, err := readCheckpoint(path)
	if err != nil {
		return nil, nil, err
	}
	if meta.State.Phase != phaseDone {
		return nil, nil, fmt.Errorf("%s: saved before its training finished", path)
	}
	if trained, err = meta.config(path); err != nil {
		return nil, nil, err
	}
	where := path + " (its config)"
	root, err := strictyaml.Parse(where, []byte(meta.Config))
	if err != nil {
		return nil, nil, err
	}
	if overridden, err = config.DecodeOverridden(where, root, overrides); err != nil {
		return nil, nil, err
	}
	return trained, overridden, nil
}
