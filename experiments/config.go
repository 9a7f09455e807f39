package experiments

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"extrapolate/data"
	"extrapolate/model"
	"extrapolate/position"
)

// Config is one run: what to train, how, and at which lengths to evaluate it.
type Config struct {
	// Name names the run and its results folder.
	Name     string          `yaml:"name"`
	Seed     uint64          `yaml:"seed"`
	Data     data.Config     `yaml:"data"`
	Model    model.Config    `yaml:"model"`
	Position position.Config `yaml:"position"`
	Train    Train           `yaml:"train"`
	Eval     Eval            `yaml:"eval"`
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

// ConfigDir is where a bare config name is looked up.
const ConfigDir = "configs"

// Resolve turns a config argument into a path: a bare name such as rope or rope.yaml is looked up
// in ConfigDir; anything with a path separator is used as given.
func Resolve(arg string) string {
	if !isBareName(arg) {
		return arg
	}
	if _, err := os.Stat(arg); err == nil && filepath.Ext(arg) != "" {
		return arg
	}
	if filepath.Ext(arg) == "" {
		arg += ".yaml"
	}
	return filepath.Join(ConfigDir, arg)
}

// isBareName reports whether a config argument is a name rather than a path.
func isBareName(arg string) bool {
	return !strings.ContainsRune(arg, filepath.Separator) && !strings.ContainsRune(arg, '/')
}

// ReadYAML reads a config file into a YAML document, with a size limit.
func ReadYAML(path string) (*yaml.Node, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	if len(b) > maxConfigBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes, too large for a config", path, maxConfigBytes)
	}
	return parseYAML(path, b)
}

func parseYAML(path string, b []byte) (*yaml.Node, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty config", path)
		}
		return nil, fmt.Errorf("%s: %s", path, oneLine(err))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: more than one YAML document", path)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: a config is a mapping of sections (name, model, train, ...)", path)
	}
	return doc.Content[0], nil
}

// Load reads a run config, applies -set overrides (key=value, key a dotted path such as
// train.steps, value YAML such as 300 or [64,128]), fills in defaults and checks every field.
func Load(path string, sets []string) (Config, error) {
	root, err := ReadYAML(path)
	if err != nil {
		return Config{}, err
	}
	return decodeRun(path, root, sets)
}

func decodeRun(path string, root *yaml.Node, sets []string) (Config, error) {
	for _, s := range sets {
		if err := applySet(root, s); err != nil {
			return Config{}, err
		}
	}
	c := Default()
	if err := decodeStrict(path, root, &c); err != nil {
		return Config{}, err
	}
	if c.Name == "" {
		base := filepath.Base(path)
		c.Name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	if err := c.Check(); err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// applySet sets key=value in a YAML mapping, creating sections as needed.
func applySet(root *yaml.Node, set string) error {
	key, value, ok := strings.Cut(set, "=")
	if !ok || key == "" {
		return fmt.Errorf("-set %q: want key=value, e.g. train.steps=300", set)
	}
	var v yaml.Node
	if err := yaml.Unmarshal([]byte(value), &v); err != nil {
		return fmt.Errorf("-set %s: %s", key, oneLine(err))
	}
	val := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: ""}
	if len(v.Content) == 1 {
		val = v.Content[0]
	}
	node := root
	parts := strings.Split(key, ".")
	for i, p := range parts {
		if node.Kind != yaml.MappingNode {
			return fmt.Errorf("-set %s: %s is not a section", key, strings.Join(parts[:i], "."))
		}
		var next *yaml.Node
		for j := 0; j+1 < len(node.Content); j += 2 {
			if node.Content[j].Value == p {
				next = node.Content[j+1]
				if i == len(parts)-1 {
					node.Content[j+1] = val
				}
			}
		}
		if i == len(parts)-1 {
			if next == nil {
				node.Content = append(node.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: p}, val)
			}
			return nil
		}
		if next == nil || next.Kind != yaml.MappingNode {
			next = &yaml.Node{Kind: yaml.MappingNode}
			node.Content = append(node.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: p}, next)
		}
		node = next
	}
	return nil
}

// decodeStrict decodes a YAML mapping into v, which holds the defaults. An unknown key, a
// duplicate key or a value of the wrong type is an error naming the field by its dotted path.
func decodeStrict(path string, root *yaml.Node, v any) error {
	if err := checkKeys(root, reflect.TypeOf(v).Elem(), ""); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := root.Decode(v); err != nil {
		return fmt.Errorf("%s: %s", path, oneLine(err))
	}
	return nil
}

var lineRE = regexp.MustCompile(`line \d+: `)

// checkKeys walks a mapping against a struct type: every key must be a field's yaml name, no key
// may appear twice, and every value must decode into its field's type.
func checkKeys(n *yaml.Node, t reflect.Type, prefix string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: want a section of fields (line %d)", strings.TrimSuffix(prefix, "."), n.Line)
	}
	fields := map[string]reflect.Type{}
	var names []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if tag == "" || tag == "-" {
			continue
		}
		fields[tag] = f.Type
		names = append(names, tag)
	}
	sort.Strings(names)
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		full := prefix + k.Value
		if seen[k.Value] {
			return fmt.Errorf("%s: given twice (line %d)", full, k.Line)
		}
		seen[k.Value] = true
		ft, ok := fields[k.Value]
		if !ok {
			where := "the config"
			if prefix != "" {
				where = strings.TrimSuffix(prefix, ".")
			}
			return fmt.Errorf("%s: unknown field (line %d); %s takes %s", full, k.Line, where, strings.Join(names, ", "))
		}
		if err := checkValue(val, ft, full); err != nil {
			return err
		}
	}
	return nil
}

// checkValue checks one value against its field's type: a section recursively, anything else
// by decoding it on its own, so that an error names this field.
func checkValue(val *yaml.Node, ft reflect.Type, full string) error {
	et := ft
	for et.Kind() == reflect.Pointer {
		et = et.Elem()
	}
	_, custom := reflect.New(et).Interface().(yaml.Unmarshaler)
	null := val.Kind == yaml.ScalarNode && val.Tag == "!!null"
	if et.Kind() == reflect.Struct && !custom && !null {
		return checkKeys(val, et, full+".")
	}
	if et.Kind() == reflect.Slice && et.Elem().Kind() == reflect.Struct && val.Kind == yaml.SequenceNode {
		for i, item := range val.Content {
			if err := checkKeys(item, et.Elem(), fmt.Sprintf("%s[%d].", full, i)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := val.Decode(reflect.New(ft).Interface()); err != nil {
		return fmt.Errorf("%s: %s", full, strings.TrimSpace(lineRE.ReplaceAllString(oneLine(err), "")))
	}
	return nil
}

func oneLine(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 1 {
		// One line: the first problem, and how many more.
		return fmt.Sprintf("%s (and %d more)", strings.Join(strings.Fields(te.Errors[0]), " "), len(te.Errors)-1)
	}
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	s = strings.TrimPrefix(s, "unmarshal errors:")
	s = strings.Join(strings.Fields(s), " ")
	return s
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Check reports the first field that makes no sense, by its dotted name.
func (c *Config) Check() error {
	c.Model.Vocab = data.Vocab
	if !nameRE.MatchString(c.Name) || len(c.Name) > 100 {
		return fmt.Errorf("name: %q, want letters, digits, '.', '_' or '-' (it names the results folder)", c.Name)
	}
	if err := c.Model.Check(); err != nil {
		return err
	}
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
	// Upper bounds keep a typo from asking for terabytes: each is far beyond what this trainer
	// is for, and products that size buffers are bounded too.
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
		{"position.max_len", c.Position.MaxLen, 1 << 20},
		{"eval.tokens", c.Eval.Tokens, 1 << 30},
		{"eval.batch_tokens", c.Eval.BatchTokens, 1 << 22},
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
	if f := t.Finetune; f != nil {
		if f.SeqLen <= t.SeqLen {
			return fmt.Errorf("train.finetune.seq_len: %d, want a length above train.seq_len %d", f.SeqLen, t.SeqLen)
		}
		if f.Steps <= 0 {
			return fmt.Errorf("train.finetune.steps: %d, want a positive number", f.Steps)
		}
		if !(f.LR > 0) || math.IsInf(f.LR, 0) {
			return fmt.Errorf("train.finetune.lr: %v, want a positive number", f.LR)
		}
	}
	seen := map[int]bool{}
	for i, n := range c.Eval.Lengths {
		switch {
		case n <= 0:
			return fmt.Errorf("eval.lengths: %d, want positive lengths", n)
		case seen[n]:
			return fmt.Errorf("eval.lengths: %d given twice", n)
		case i > 0 && n < c.Eval.Lengths[i-1]:
			return fmt.Errorf("eval.lengths: %v, want them in increasing order", c.Eval.Lengths)
		case c.Eval.Tokens%n != 0:
			return fmt.Errorf("eval.lengths: %d does not divide eval.tokens %d, so lengths would not score the same tokens", n, c.Eval.Tokens)
		case n > c.Eval.BatchTokens:
			return fmt.Errorf("eval.batch_tokens: %d, want at least the longest length %d", c.Eval.BatchTokens, n)
		case n > 1<<20:
			return fmt.Errorf("eval.lengths: %d, above the limit of %d", n, 1<<20)
		}
		seen[n] = true
	}
	if s := c.Eval.Stride; s != nil && (*s <= 0 || *s > c.Eval.Lengths[0]) {
		return fmt.Errorf("eval.stride: %d, want a stride between 1 and the shortest evaluation length %d", *s, c.Eval.Lengths[0])
	}
	if pk := c.Train.Passkey; pk != nil {
		if !(pk.Fraction >= 0 && pk.Fraction < 1) {
			return fmt.Errorf("train.passkey.fraction: %v, want a fraction in [0, 1)", pk.Fraction)
		}
		if c.Train.SeqLen < data.PasskeyMinLen || c.Eval.Lengths[0] < data.PasskeyMinLen {
			return fmt.Errorf("train.passkey: passkey documents need train.seq_len and every evaluation length at least %d", data.PasskeyMinLen)
		}
	}
	if c.Data.Corpus != "" && c.Data.Corpus != "gosrc" && c.Data.Corpus != "text" {
		return fmt.Errorf("data.corpus: unknown corpus %q (known: gosrc, text)", c.Data.Corpus)
	}
	_, eval, err := c.Schemes()
	if err != nil {
		return err
	}
	if f := c.Train.Finetune; f != nil {
		// Fine-tuning runs after the main phase: a length the scheme cannot take must fail now.
		if _, err := eval.Embedding(f.SeqLen); err != nil {
			return fmt.Errorf("train.finetune.seq_len: %v", err)
		}
	}
	return nil
}

// Schemes builds the position scheme the model trains with and the one it is evaluated with:
// RoPE scaling is applied when evaluating (and fine-tuning), not in the main training phase.
func (c *Config) Schemes() (train, eval position.Scheme, err error) {
	spec := position.Spec{DModel: c.Model.DModel, Heads: c.Model.Heads, TrainLen: c.Train.SeqLen, Config: c.Position}
	if eval, err = position.New(spec); err != nil {
		return nil, nil, err
	}
	spec.Config.Scaling = nil
	if train, err = position.New(spec); err != nil {
		return nil, nil, err
	}
	return train, eval, nil
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
