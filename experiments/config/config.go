// Package config is a run's config: its fields, their defaults and checks, and what a checked
// config builds once (Resolved): the position schemes of its phases, the model config and the
// memory it needs. It sits below the other packages of experiments and imports none of them.
package config

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"extrapolate/data"
	"extrapolate/internal/strictyaml"
	"extrapolate/model"
	"extrapolate/position"
	"extrapolate/task"
)

// Config is one run: what to train, how, and at which lengths to evaluate it.
type Config struct {
	// Name names the run and its results folder.
	Name     string          `yaml:"name"`
	Seed     uint64          `yaml:"seed"`
	Data     data.Config     `yaml:"data"`
	Model    model.Config    `yaml:"model"`
	Position position.Config `yaml:"position"`
	// Attention is the attention temperature, for any scheme (model.Attention).
	Attention model.Attention `yaml:"attention,omitempty"`
	Train     Train           `yaml:"train"`
	Eval      Eval            `yaml:"eval"`
	// Task trains on tasks instead of the corpus and scores exact match by size. A pointer so
	// that a config without it marshals, and hashes, as it did before tasks existed.
	Task *task.Config `yaml:"task,omitempty"`
}

// Train is the train section of a config.
type Train struct {
	SeqLen    int `yaml:"seq_len"`
	BatchSize int `yaml:"batch_size"`
	Steps     int `yaml:"steps"`
	// LR is the peak learning rate, reached after Warmup steps, then decayed along a cosine to
	// MinLR at the last step.
	LR float64 `yaml:"lr"`
	// MinLR is lr/10 when unset.
	MinLR *float64 `yaml:"min_lr,omitempty"`
	// Warmup is min(100, steps/10) when unset.
	Warmup      *int    `yaml:"warmup,omitempty"`
	WeightDecay float64 `yaml:"weight_decay"`
	GradClip    float64 `yaml:"grad_clip"`
	Beta1       float64 `yaml:"beta1"`
	Beta2       float64 `yaml:"beta2"`
	// LogEvery is how often a row goes to the training log.
	LogEvery int `yaml:"log_every"`
	// CheckpointEvery saves a checkpoint every so many steps; 0 saves only at the end.
	CheckpointEvery int `yaml:"checkpoint_every"`
	// Finetune continues training briefly at a longer length with the RoPE scaling in force.
	Finetune *Finetune `yaml:"finetune,omitempty"`
	// Passkey mixes passkey documents into the training batches, and adds passkey retrieval to
	// the evaluation. Unset, training draws exactly the batches it drew before passkeys existed.
	Passkey *Passkey `yaml:"passkey,omitempty"`
	// DroPE drops the position scheme for the last steps and evaluates without positions
	// (drope.go). A pointer so that a config without it marshals, and hashes, as before.
	DroPE *DroPE `yaml:"drope,omitempty"`
	// Positions draws the position ids of each training batch of the main phase (randomized
	// positions, PoSE; positions.go). A pointer so that a config without it marshals, and
	// hashes, as before.
	Positions *position.IDsConfig `yaml:"positions,omitempty"`
}

// Passkey is the train.passkey section.
type Passkey struct {
	// Fraction is the share of training windows that are passkey documents, in [0, 1).
	Fraction float64 `yaml:"fraction"`
}

// Finetune is the optional fine-tuning phase, as in the PI and YaRN protocols.
type Finetune struct {
	SeqLen int `yaml:"seq_len"`
	Steps  int `yaml:"steps"`
	// LR is held constant; train.min_lr when unset.
	LR float64 `yaml:"lr,omitempty"`
}

// Eval is the eval section of a config.
type Eval struct {
	// Lengths are the evaluation lengths; each must divide Tokens.
	Lengths []int `yaml:"lengths"`
	// Tokens is how many validation tokens are scored at every length.
	Tokens int `yaml:"tokens"`
	// BatchTokens bounds the tokens in one evaluation batch.
	BatchTokens int `yaml:"batch_tokens"`
	// Stride, when set, evaluates in sliding windows a stride apart, each scoring only the
	// tokens no earlier window scored; unset, windows do not overlap. A pointer so that a config
	// without it marshals, and hashes, as it did before strides existed.
	Stride *int `yaml:"stride,omitempty"`
	// Measures names the measures to take besides those that measure every run they apply to
	// (perplexity and loss by position; passkey retrieval with train.passkey): attention, or
	// one registered from another package (measure.Register). Unset, a config
	// marshals, and hashes, as it did before measures existed.
	Measures []string `yaml:"measures,omitempty"`
}

// Default is the config every file is read on top of: a field the file leaves out keeps its
// value here.
func Default() Config {
	return Config{
		Seed:     1,
		Data:     data.Config{Corpus: "gosrc"},
		Model:    model.Config{DModel: 64, Layers: 2, Heads: 4},
		Position: position.Config{Scheme: "rope"},
		Train: Train{
			SeqLen: 64, BatchSize: 16, Steps: 1500, LR: 1e-3,
			WeightDecay: 0.1, GradClip: 1, Beta1: 0.9, Beta2: 0.95, LogEvery: 10,
		},
		Eval: Eval{Lengths: []int{64, 128, 256, 512, 1024}, Tokens: 65536, BatchTokens: 16384},
	}
}

// maxConfigBytes bounds a config file: a config is a page of YAML, and anything far larger is a
// mistake or an attack.
const maxConfigBytes = 1 << 20

// Dir is where a bare config name is looked up.
const Dir = "configs"

// Resolve turns a config argument into a path: a bare name such as rope or rope.yaml is looked up
// in Dir; anything with a path separator is used as given.
func Resolve(arg string) string {
	if !IsBareName(arg) {
		return arg
	}
	if _, err := os.Stat(arg); err == nil && filepath.Ext(arg) != "" {
		return arg
	}
	if filepath.Ext(arg) == "" {
		arg += ".yaml"
	}
	return filepath.Join(Dir, arg)
}

// IsBareName reports whether a config argument is a name rather than a path.
func IsBareName(arg string) bool {
	return !strings.ContainsRune(arg, filepath.Separator) && !strings.ContainsRune(arg, '/')
}

// ReadYAML reads a config file, a run's or a comparison's, into a YAML mapping, with a size
// limit.
func ReadYAML(path string) (*yaml.Node, error) { return strictyaml.Read(path, maxConfigBytes) }

// Load reads a run config, applies -set overrides (key=value, key a dotted path such as
// train.steps, value YAML such as 300 or [64,128]), fills in defaults and checks every field.
func Load(path string, sets []string) (Config, error) {
	r, err := LoadResolved(path, sets)
	if err != nil {
		return Config{}, err
	}
	return r.Config(), nil
}

// LoadResolved reads a run config as Load does and returns it resolved, with the schemes its
// checks built, for a run to carry.
func LoadResolved(path string, sets []string) (*Resolved, error) {
	return LoadOverridden(path, Sets(sets))
}

// LoadOverridden is LoadResolved with overrides that may come from a file, as a comparison's
// settings do, not only from -set: an error in one names where it was given.
func LoadOverridden(path string, overrides []Override) (*Resolved, error) {
	root, err := ReadYAML(path)
	if err != nil {
		return nil, err
	}
	return decode(path, root, overrides)
}

// Override is a setting applied over a run's config before it is decoded: a -set key=value
// (Set), or a dotted key and its value as a file gives them (Key, Value, at Line of the file
// From names), as a comparison's set: does.
type Override struct {
	Set   string
	Key   string
	Value *yaml.Node
	Line  int
	From  string
}

// Sets are -set key=value overrides, as Overrides.
func Sets(sets []string) []Override {
	out := make([]Override, len(sets))
	for i, s := range sets {
		out[i] = Override{Set: s}
	}
	return out
}

// apply applies the override to a config's mapping.
func (o Override) apply(root *yaml.Node) error {
	if o.Value == nil {
		return strictyaml.Set(root, o.Set)
	}
	return strictyaml.SetFrom(root, o.Key, o.Value, o.Line, o.From)
}

// Decode is LoadResolved on a config already read (ReadYAML) or held elsewhere, such as in a
// checkpoint; path names it in errors and, when the config has no name, gives the name.
func Decode(path string, root *yaml.Node, sets []string) (*Resolved, error) {
	return decode(path, root, Sets(sets))
}

// DecodeOverridden is Decode with overrides that come from elsewhere than -set, as an export's
// config.json overrides the config it holds (cmd/import): an error in one names where it was
// given.
func DecodeOverridden(path string, root *yaml.Node, overrides []Override) (*Resolved, error) {
	return decode(path, root, overrides)
}

func decode(path string, root *yaml.Node, overrides []Override) (*Resolved, error) {
	for _, o := range overrides {
		if err := o.apply(root); err != nil {
			return nil, err
		}
	}
	c := Default()
	if err := strictyaml.Decode(path, root, &c); err != nil {
		return nil, err
	}
	if c.Name == "" {
		base := filepath.Base(path)
		c.Name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	c.fillDefaults()
	r, err := c.Resolve()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// A name — a run's, a comparison's, a label — becomes a folder (results/<name>,
// runs/<label>-s<seed>) and part of file names (passkey_<label>.png), so it must be a plain
// label: no separator, and no leading dot, so neither ".." nor a hidden file. slurm/recheck.sh
// checks the run names it is given with the same pattern.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// MaxName bounds a name, far below a file name's limit.
const MaxName = 100

// IsName reports whether name is a plain label, fit to name a folder or a file: at most MaxName
// letters, digits, '.', '_' or '-', the first a letter or digit.
func IsName(name string) bool { return nameRE.MatchString(name) && len(name) <= MaxName }

// CheckName refuses a name that is not a plain label (IsName), naming its field.
func CheckName(field, name string) error {
	if !IsName(name) {
		return fmt.Errorf("%s: %q, want at most %d letters, digits, '.', '_' or '-', the first a letter or digit (it names a results folder)", field, name, MaxName)
	}
	return nil
}

// Complete fills in the fields whose defaults depend on others — train.warmup, min(100,
// steps/10); train.min_lr, lr/10; train.finetune.lr, min_lr — and then checks every field.
func (c *Config) Complete() error {
	c.fillDefaults()
	return c.Check()
}

// fillDefaults is Complete without the check.
func (c *Config) fillDefaults() {
	if c.Train.Warmup == nil {
		w := min(100, c.Train.Steps/10)
		c.Train.Warmup = &w
	}
	if c.Train.MinLR == nil {
		minLR := c.Train.LR / 10
		c.Train.MinLR = &minLR
	}
	if f := c.Train.Finetune; f != nil && f.LR == 0 {
		f.LR = *c.Train.MinLR
	}
}

// Check reports the first field that makes no sense, by its dotted name. It changes nothing:
// the defaults that depend on other fields are Complete's. It is Resolve without the result.
func (c Config) Check() error {
	_, err := c.Resolve()
	return err
}

// checkFields is Check up to the schemes: the fields that need nothing built.
func (c Config) checkFields() error {
	if c.Train.Warmup == nil || c.Train.MinLR == nil {
		return fmt.Errorf("train.warmup, train.min_lr: not filled in (Complete fills them from the other fields)")
	}
	if err := CheckName("name", c.Name); err != nil {
		return err
	}
	if err := c.modelConfig().Check(); err != nil {
		return err
	}
	if err := c.checkLimits(); err != nil {
		return err
	}
	if err := c.checkRanges(); err != nil {
		return err
	}
	if err := c.Train.checkFinetune(); err != nil {
		return err
	}
	if err := c.checkDroPE(); err != nil {
		return err
	}
	if err := c.Eval.check(); err != nil {
		return err
	}
	if err := c.checkPasskey(); err != nil {
		return err
	}
	return c.Data.Check()
}

// tasks resolves the task section, if any, and refuses a training length that cannot hold its
// longest training example, and a run that mixes tasks with passkey documents.
func (c Config) tasks() ([]task.Task, int, error) {
	if c.Task == nil {
		return nil, 0, nil
	}
	tasks, examples, err := c.Task.Resolve()
	if err != nil {
		return nil, 0, err
	}
	if c.Train.Passkey != nil {
		return nil, 0, fmt.Errorf("train.passkey: a run trains on tasks or on passkey documents, not both")
	}
	if need := task.SeqLen(tasks); c.Train.SeqLen < need {
		return nil, 0, fmt.Errorf("train.seq_len: %d, want at least %d, the window of the longest training example of %v", c.Train.SeqLen, need, c.Task.Names)
	}
	return tasks, examples, nil
}

// Upper bounds of the eval section (checkLimits, Eval.check), which commands that set these
// sizes from their flags check too, naming the flag: cmd/eval's -lengths and -tokens.
const (
	MaxEvalLength      = 1 << 20
	MaxEvalTokens      = 1 << 30
	MaxEvalBatchTokens = 1 << 22
)

// checkLimits refuses sizes above upper bounds, which keep a typo from asking for terabytes:
// each is far beyond what this trainer is for, and products that size buffers are bounded too.
func (c Config) checkLimits() error {
	limits := []struct {
		field string
		value int
		max   int
	}{
		{"model.d_model", c.Model.DModel, 1 << 13},
		{"model.layers", c.Model.Layers, 1 << 8},
		{"model.heads", c.Model.Heads, 1 << 10},
		{"train.seq_len", c.Train.SeqLen, 1 << 16},
		{"train.batch_size", c.Train.BatchSize, 1 << 16},
		{"train.steps", c.Train.Steps, 1 << 30},
		{"train.log_every", c.Train.LogEvery, 1 << 30},
		{"train.checkpoint_every", c.Train.CheckpointEvery, 1 << 30},
		{"eval.tokens", c.Eval.Tokens, MaxEvalTokens},
		{"eval.batch_tokens", c.Eval.BatchTokens, MaxEvalBatchTokens},
	}
	for _, l := range limits {
		if l.value > l.max {
			return fmt.Errorf("%s: %d, above the limit of %d", l.field, l.value, l.max)
		}
	}
	if c.Train.BatchSize > 0 && c.Train.SeqLen > (1<<22)/c.Train.BatchSize {
		return fmt.Errorf("train.batch_size: %d sequences of %d tokens, above the limit of %d tokens a step", c.Train.BatchSize, c.Train.SeqLen, 1<<22)
	}
	if f := c.Train.Finetune; f != nil && (f.SeqLen > 1<<16 || f.Steps > 1<<30) {
		return fmt.Errorf("train.finetune: seq_len %d or steps %d above the limits of %d and %d", f.SeqLen, f.Steps, 1<<16, 1<<30)
	}
	return nil
}

// checkRanges refuses a training or evaluation number outside the range it makes sense in
// (a step count that is not positive, a learning rate that is not finite), naming the range.
// Complete must have filled train.warmup and train.min_lr.
func (c Config) checkRanges() error {
	t := c.Train
	checks := []struct {
		bad   bool
		field string
		value any
		want  string
	}{
		{t.SeqLen <= 0, "train.seq_len", t.SeqLen, "a positive number"},
		{t.BatchSize <= 0, "train.batch_size", t.BatchSize, "a positive number"},
		{t.Steps <= 0, "train.steps", t.Steps, "a positive number"},
		{!(t.LR > 0) || math.IsInf(t.LR, 0), "train.lr", t.LR, "a positive number"},
		{!(*t.MinLR >= 0) || *t.MinLR > t.LR, "train.min_lr", *t.MinLR, "between 0 and train.lr"},
		{*t.Warmup < 0 || *t.Warmup > t.Steps, "train.warmup", *t.Warmup, "between 0 and train.steps"},
		{!(t.WeightDecay >= 0) || t.WeightDecay >= 1, "train.weight_decay", t.WeightDecay, "at least 0 and below 1"},
		{!(t.GradClip >= 0) || math.IsInf(t.GradClip, 0), "train.grad_clip", t.GradClip, "0 (off) or a positive number"},
		{!(t.Beta1 >= 0 && t.Beta1 < 1), "train.beta1", t.Beta1, "in [0, 1)"},
		{!(t.Beta2 >= 0 && t.Beta2 < 1), "train.beta2", t.Beta2, "in [0, 1)"},
		{t.LogEvery <= 0, "train.log_every", t.LogEvery, "a positive number"},
		{t.CheckpointEvery < 0, "train.checkpoint_every", t.CheckpointEvery, "0 (only at the end) or a positive number"},
		{c.Eval.Tokens <= 0, "eval.tokens", c.Eval.Tokens, "a positive number"},
		{c.Eval.BatchTokens <= 0, "eval.batch_tokens", c.Eval.BatchTokens, "a positive number"},
		{len(c.Eval.Lengths) == 0, "eval.lengths", c.Eval.Lengths, "at least one length"},
	}
	for _, k := range checks {
		if k.bad {
			return fmt.Errorf("%s: %v, want %s", k.field, k.value, k.want)
		}
	}
	return nil
}

// checkFinetune refuses a fine-tuning phase that would not lengthen the training sequences or
// would not train.
func (t Train) checkFinetune() error {
	f := t.Finetune
	if f == nil {
		return nil
	}
	if f.SeqLen <= t.SeqLen {
		return fmt.Errorf("train.finetune.seq_len: %d, want a length above train.seq_len %d", f.SeqLen, t.SeqLen)
	}
	if f.Steps <= 0 {
		return fmt.Errorf("train.finetune.steps: %d, want a positive number", f.Steps)
	}
	if !(f.LR > 0) || math.IsInf(f.LR, 0) {
		return fmt.Errorf("train.finetune.lr: %v, want a positive number", f.LR)
	}
	return nil
}

// check refuses evaluation lengths that would not score the same tokens in the same batches,
// unknown measures, and a stride that would skip tokens. checkRanges has made sure there is a
// length and that eval.tokens is positive.
func (e Eval) check() error {
	seen := map[int]bool{}
	for i, n := range e.Lengths {
		switch {
		case n <= 0:
			return fmt.Errorf("eval.lengths: %d, want positive lengths", n)
		case seen[n]:
			return fmt.Errorf("eval.lengths: %d given twice", n)
		case i > 0 && n < e.Lengths[i-1]:
			return fmt.Errorf("eval.lengths: %v, want them in increasing order", e.Lengths)
		case e.Tokens%n != 0:
			return fmt.Errorf("eval.lengths: %d does not divide eval.tokens %d, so lengths would not score the same tokens", n, e.Tokens)
		case n > e.BatchTokens:
			return fmt.Errorf("eval.batch_tokens: %d, want at least the longest length %d", e.BatchTokens, n)
		case n > MaxEvalLength:
			return fmt.Errorf("eval.lengths: %d, above the limit of %d", n, MaxEvalLength)
		}
		seen[n] = true
	}
	if err := checkMeasures(e.Measures); err != nil {
		return err
	}
	if s := e.Stride; s != nil && (*s <= 0 || *s > e.Lengths[0]) {
		return fmt.Errorf("eval.stride: %d, want a stride between 1 and the shortest evaluation length %d", *s, e.Lengths[0])
	}
	return nil
}

// Protocol names the way an evaluation cut the validation tokens into windows of length n.
func (e Eval) Protocol() string {
	if e.Stride == nil {
		return "non-overlapping windows"
	}
	return fmt.Sprintf("sliding windows, stride %d", *e.Stride)
}

// checkPasskey refuses a passkey fraction that is not a fraction, and lengths too short to hold
// a passkey document.
func (c Config) checkPasskey() error {
	pk := c.Train.Passkey
	if pk == nil {
		return nil
	}
	if !(pk.Fraction >= 0 && pk.Fraction < 1) {
		return fmt.Errorf("train.passkey.fraction: %v, want a fraction in [0, 1)", pk.Fraction)
	}
	if c.Train.SeqLen < data.PasskeyMinLen || c.Eval.Lengths[0] < data.PasskeyMinLen {
		return fmt.Errorf("train.passkey: passkey documents need train.seq_len and every evaluation length at least %d", data.PasskeyMinLen)
	}
	return nil
}

// checkSchemeLengths asks the position scheme, before training, about every length it will be
// given: the longest of training and evaluation, and fine-tuning's. train and eval are the
// config's schemes of the main phase and of evaluation.
func (c Config) checkSchemeLengths(train, eval position.Scheme) error {
	// A scheme whose fields bound its lengths (xPos's scales) is asked about the longest now, not
	// when evaluation reaches it after training, so that the error says what the longest needs.
	// The scheme without the scaling, which trains and evaluates unscaled, has the same fields.
	if err := position.CheckLength(eval, max(c.Train.SeqLen, c.Eval.Lengths[len(c.Eval.Lengths)-1])); err != nil {
		return err
	}
	if c.Train.DroPE != nil {
		// The scheme that trains is not the one evaluated: ask it about the training length.
		if err := position.CheckLength(train, c.Train.SeqLen); err != nil {
			return err
		}
	}
	if f := c.Train.Finetune; f != nil {
		// Fine-tuning runs after the main phase: a length the scheme cannot take must fail now.
		if err := position.Check(eval, f.SeqLen); err != nil {
			return fmt.Errorf("train.finetune.seq_len: %v", err)
		}
	}
	return nil
}

// Hash is the SHA-256 of the resolved config, in hex.
func (c Config) Hash() string {
	sum := sha256.Sum256(c.Marshal())
	return hex.EncodeToString(sum[:])
}

// Marshal writes the config as YAML, every field resolved.
func (c Config) Marshal() []byte {
	b, err := yaml.Marshal(c)
	if err != nil {
		panic(err) // a Config always marshals
	}
	return b
}
