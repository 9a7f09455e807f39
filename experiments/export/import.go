package export

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"

	"go.yaml.in/yaml/v3"
	"gorgonia.org/tensor"

	"extrapolate/checkpoint"
	"extrapolate/experiments/config"
	"extrapolate/experiments/training"
	"extrapolate/internal/inputerr"
	"extrapolate/internal/inputfile"
	"extrapolate/internal/safetensors"
	"extrapolate/internal/strictyaml"
	"extrapolate/model"
)

// Bounds on the files of an export that Import reads: config.json is a few hundred kilobytes at
// most, and the weights of a model this program can evaluate far below the second.
const (
	maxImportConfig  = 16 << 20
	maxImportWeights = 4 << 30
)

// Imported is an export read back into a model (Import), ready to be written as a checkpoint.
type Imported struct {
	*training.Adopted
	rounded bool
}

// Rounded says the export's weights were float64, rounded to the float32 this program computes in.
func (im *Imported) Rounded() bool { return im.rounded }

// importedConfig is what Import reads of config.json; the rest it checks against the model it
// builds (checkAgainst).
type importedConfig struct {
	Format   string          `json:"format"`
	Version  int             `json:"version"`
	Name     string          `json:"name"`
	Dtype    string          `json:"dtype"`
	Partial  string          `json:"partial"`
	Train    json.RawMessage `json:"train"`
	Position struct {
		Scaling json.RawMessage `json:"scaling"`
	} `json:"position"`
	WeightsSHA256 string          `json:"weights_sha256"`
	TrainConfig   string          `json:"train_config"`
	Trained       json.RawMessage `json:"trained"`
}

// Import reads an export — dir's config.json and model.safetensors, as cmd/export writes them
// and pytorch/train.py writes them back — into a model: the config is train_config with
// config.json's name, train section and scaling over it, which is how pytorch/train.py records
// what it trained; the weights must be the ones that config's model has, each by name and
// shape, and everything else config.json states (the model, the scheme's settings, the
// attention, the evaluation, the corpus, the weights' optimizer marks) must be what that config
// builds. Every error is the input's (inputerr), one line naming the file and the field or
// weight.
func Import(dir string) (*Imported, error) {
	im, err := importExport(dir)
	return im, inputerr.Wrap(err)
}

func importExport(dir string) (*Imported, error) {
	cpath, wpath := filepath.Join(dir, ConfigFile), filepath.Join(dir, WeightsFile)
	raw, c, err := readImportConfig(cpath)
	if err != nil {
		return nil, err
	}
	wb, err := inputfile.ReadFile(wpath, maxImportWeights)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(wb)
	if hex.EncodeToString(sum[:]) != c.WeightsSHA256 {
		return nil, fmt.Errorf("%s is not the file %s was written with (its SHA-256 differs from weights_sha256)", wpath, cpath)
	}
	ts, _, err := safetensors.Decode(wb)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", wpath, err)
	}
	rc, err := importConfig(cpath, c)
	if err != nil {
		return nil, err
	}
	tensors, rounded, err := importTensors(rc, ts, c.Dtype, wpath, cpath)
	if err != nil {
		return nil, err
	}
	record := &training.ImportRecord{From: dir, WeightsSHA256: c.WeightsSHA256, Rounded: rounded, Trained: c.Trained}
	a, err := training.Adopt(rc, tensors, record, wpath)
	if err != nil {
		return nil, err
	}
	if err := checkAgainst(raw, a.Trained, cpath); err != nil {
		return nil, err
	}
	return &Imported{Adopted: a, rounded: rounded}, nil
}

// readImportConfig reads config.json, as a tree to check and as the fields Import reads.
func readImportConfig(path string) (map[string]any, *importedConfig, error) {
	b, err := inputfile.ReadFile(path, maxImportConfig)
	if err != nil {
		return nil, nil, err
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, nil, fmt.Errorf("%s: not a JSON object: %w", path, err)
	}
	var c importedConfig
	if err := json.Unmarshal(b, &c); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, nil, fmt.Errorf("%s: %s: a JSON %s, want a %s", path, te.Field, te.Value, te.Type)
		}
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	switch {
	case c.Format != Format || c.Version != Version:
		return nil, nil, fmt.Errorf("%s: format %q version %d, want %s %d", path, c.Format, c.Version, Format, Version)
	case c.Partial != "":
		return nil, nil, fmt.Errorf("%s: partial: saved at %s, before training finished; train it (cmd/train, pytorch/train.py) before importing it", path, c.Partial)
	case c.TrainConfig == "":
		return nil, nil, fmt.Errorf("%s: train_config: missing; the config the model was made from is needed to rebuild it", path)
	case c.Dtype != "float32" && c.Dtype != "float64":
		return nil, nil, fmt.Errorf("%s: dtype %q, want float32 or float64", path, c.Dtype)
	}
	return raw, &c, nil
}

// importConfig is the config of the imported model: train_config with config.json's name,
// and its train section and scaling where they differ from train_config's (pytorch/train.py
// rewrote them), decoded and checked as a config file's. An export read back unchanged thus
// gives the config it was made from, to the byte.
func importConfig(path string, c *importedConfig) (*config.Resolved, error) {
	where := path + " (its train_config)"
	root, err := strictyaml.Parse(where, []byte(c.TrainConfig))
	if err != nil {
		return nil, err
	}
	base, err := config.Decode(where, root, nil)
	if err != nil {
		return nil, err
	}
	var name json.RawMessage
	if c.Name != "" {
		name, _ = json.Marshal(c.Name)
	}
	overrides := []config.Override{}
	// add sets key to value, unless config.json's field, given says what was does.
	add := func(key string, value, given json.RawMessage, was any) error {
		if len(given) == 0 || sameJSON(given, was) {
			return nil // the same, or absent: an export written before config.json had it
		}
		var n yaml.Node
		if err := yaml.Unmarshal(value, &n); err != nil || len(n.Content) != 1 {
			return fmt.Errorf("%s: %s: not a value a config takes", path, key)
		}
		overrides = append(overrides, config.Override{Key: key, Value: n.Content[0], Line: n.Content[0].Line, From: path})
		return nil
	}
	bc := base.Config()
	train, err := trainSection(bc.Train)
	if err != nil {
		return nil, err
	}
	scaling, err := scalingSection(c.Position.Scaling)
	if err != nil {
		return nil, fmt.Errorf("%s: position.scaling: %w", path, err)
	}
	was := exportScaling(bc.EvalPhase().Position.Scaling)
	for _, e := range []error{add("name", name, name, bc.Name), add("train", c.Train, c.Train, train),
		add("position.scaling", scaling, c.Position.Scaling, was)} {
		if e != nil {
			return nil, e
		}
	}
	if len(overrides) == 0 {
		return base, nil
	}
	return config.DecodeOverridden(path+" (its train_config, with config.json's train and scaling)", root, overrides)
}

// sameJSON reports whether the JSON value a says what b, any value JSON takes, says.
func sameJSON(a json.RawMessage, b any) bool {
	bb, err := json.Marshal(b)
	if err != nil {
		return false
	}
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(bb, &y) == nil && reflect.DeepEqual(x, y)
}

// scalingSection is config.json's position.scaling, {type, factor, params}, as a config's
// position.scaling section, {type, factor, and the params beside them}; null stays null, and
// nothing (an export without the field) is nil.
func scalingSection(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return raw, nil
	}
	var s struct {
		Type   string         `json:"type"`
		Factor any            `json:"factor"`
		Params map[string]any `json:"params"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("want {type, factor, params}: %w", err)
	}
	out := map[string]any{"type": s.Type, "factor": s.Factor}
	for k, v := range s.Params {
		if _, taken := out[k]; taken {
			return nil, fmt.Errorf("params: %s is not a param", k)
		}
		out[k] = v
	}
	return json.Marshal(out)
}

// importTensors are the export's weights as the config's model has them, in its order, as
// float32, and whether any was rounded from float64. A weight missing, left over or of another
// shape is named, and so is a dtype other than config.json's.
func importTensors(rc *config.Resolved, ts []safetensors.Tensor, dtype, wpath, cpath string) ([]checkpoint.Tensor, bool, error) {
	trainScheme, _ := rc.Schemes()
	shapes, err := model.Shapes(rc.ModelConfig(), trainScheme)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", cpath, err)
	}
	byName := map[string]safetensors.Tensor{}
	for _, t := range ts {
		byName[t.Name] = t
	}
	want := map[string]string{"float32": "F32", "float64": "F64"}[dtype]
	var out []checkpoint.Tensor
	rounded := false
	for _, s := range shapes {
		t, ok := byName[s.Name]
		switch {
		case !ok:
			return nil, false, fmt.Errorf("%s: no weight %s, which the config's model has", wpath, s.Name)
		case fmt.Sprint(t.Shape) != fmt.Sprint(s.Dims):
			return nil, false, fmt.Errorf("%s: weight %s has shape %v, the config's model has %v", wpath, s.Name, t.Shape, s.Dims)
		case t.Dtype != want:
			return nil, false, fmt.Errorf("%s: weight %s is %s, but %s says dtype %s", wpath, s.Name, t.Dtype, cpath, dtype)
		}
		delete(byName, s.Name)
		v := make([]float32, 0, len(t.Data)/4)
		for _, x := range t.Float64s() {
			v = append(v, float32(x))
		}
		rounded = rounded || t.Dtype == "F64"
		out = append(out, checkpoint.Tensor{Name: s.Name, Value: tensor.New(tensor.WithShape(s.Dims...), tensor.WithBacking(v))})
	}
	if len(byName) > 0 {
		left := slices.Sorted(maps.Keys(byName))
		return nil, false, fmt.Errorf("%s: weight %s, which the config's model does not have", wpath, left[0])
	}
	return out, rounded, nil
}

// checkAgainst compares what config.json states of the model with what the imported config
// builds, as cmd/export would write it, and names the first field that differs: an export
// edited by hand, or written from another config than its train_config, is refused rather
// than scored as something it is not. The fields the import takes from config.json (the name,
// the train section, the scaling) and those that only record (the dtype, the checksum, the
// corpus's Go version) are not compared; nor is a field cmd/export does not write.
func checkAgainst(raw map[string]any, t *training.Trained, path string) error {
	_, scheme := t.Resolved.Schemes()
	var weights []exportedWeight
	for _, p := range t.Model.Params {
		weights = append(weights, weightOf(p))
	}
	c, err := exportedConfig(t, scheme, weights)
	if err != nil {
		return err
	}
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	var want map[string]any
	if err := json.Unmarshal(b, &want); err != nil {
		return err
	}
	for _, key := range []string{"model", "train_len", "position", "attention", "eval", "data", "tokenizer", "weights"} {
		if d := differs(key, raw[key], want[key]); d != "" {
			return fmt.Errorf("%s: %s", path, d)
		}
	}
	return nil
}

// skipped are the fields checkAgainst does not compare, by their dotted paths.
var skipped = map[string]bool{"position.config": true, "position.scaling": true, "data.go_version": true, "data.split": true}

// differs names the first place where got, from config.json, differs from want, what the
// config builds: "position.settings.base: 500, the config builds 10000". A field got lacks is
// not compared; one it has that want lacks is named.
func differs(at string, got, want any) string {
	if skipped[at] {
		return ""
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: %s, the config builds an object", at, short(got))
		}
		for k, gv := range g {
			wv, ok := w[k]
			if !ok && !skipped[at+"."+k] {
				return fmt.Sprintf("%s.%s: %s, which the config does not have", at, k, short(gv))
			}
			if d := differs(at+"."+k, gv, wv); d != "" {
				return d
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: %s, the config builds %s", at, short(got), short(want))
		}
		for i := range w {
			if d := differs(fmt.Sprintf("%s[%d]", at, i), g[i], w[i]); d != "" {
				return d
			}
		}
	default:
		if got != want {
			return fmt.Sprintf("%s: %s, the config builds %s", at, short(got), short(want))
		}
	}
	return ""
}

// short is a value as JSON, cut to fit a line.
func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 60 {
		return string(bytes.TrimSpace(b[:57])) + "..."
	}
	return string(b)
}
