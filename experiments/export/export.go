// Package export writes a trained model in a form other tools read, its weights as safetensors
// and a JSON config naming everything needed to rebuild the model and score it as cmd/eval does
// (New), and reads such a pair back into a checkpoint (Import): what cmd/export and cmd/import
// do, for pytorch/load.py and pytorch/train.py. It sits above package training, whose models it
// writes and whose checkpoint format it writes an import in (training.Adopt); nothing of the run
// or the comparison imports it.
package export

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"
	"gorgonia.org/tensor"

	"extrapolate/data"
	"extrapolate/experiments/config"
	"extrapolate/experiments/training"
	"extrapolate/internal/safetensors"
	"extrapolate/model"
	"extrapolate/position"
)

// Files of an export.
const (
	WeightsFile = "model.safetensors"
	ConfigFile  = "config.json"
)

// Format and Version name what config.json describes, for a loader to check.
const (
	Format  = "extrapolate-export"
	Version = 1
)

// Files is a trained model as other tools read it: the contents of its weights file, as
// safetensors, and of its config file, naming everything needed to rebuild the model and score
// it as cmd/eval does.
type Files struct {
	Weights []byte
	Config  []byte
}

// Config is config.json: the model's sizes and fixed choices, the position scheme as resolved
// (every field with its default filled in), the scaling and attention temperature, the
// evaluation and the corpus, and every weight's name and shape.
type Config struct {
	Format    string            `json:"format"`
	Version   int               `json:"version"`
	Name      string            `json:"name"`
	Dtype     string            `json:"dtype"`
	Partial   string            `json:"partial,omitempty"`
	Model     exportedModel     `json:"model"`
	TrainLen  int               `json:"train_len"`
	Position  exportedPosition  `json:"position"`
	Attention exportedAttention `json:"attention"`
	Eval      exportedEval      `json:"eval"`
	Data      exportedData      `json:"data"`
	// Train is the config's train section, as JSON under the YAML names, for a trainer
	// elsewhere (pytorch/train.py) to train as train does; it rewrites the section with what
	// it trained, and cmd/import takes it over TrainConfig's.
	Train     map[string]any     `json:"train"`
	Tokenizer training.Tokenizer `json:"tokenizer"`
	Weights   []exportedWeight   `json:"weights"`
	// WeightsSHA256 ties config.json to the model.safetensors written with it.
	WeightsSHA256 string `json:"weights_sha256"`
	// TrainConfig is the run's whole config as YAML, for the record.
	TrainConfig string `json:"train_config"`
}

// exportedModel states the architecture, including what the code fixes rather than the config.
type exportedModel struct {
	DModel     int     `json:"d_model"`
	Layers     int     `json:"layers"`
	Heads      int     `json:"heads"`
	HeadDim    int     `json:"head_dim"`
	Vocab      int     `json:"vocab"`
	MLPHidden  int     `json:"mlp_hidden"`
	Activation string  `json:"activation"`
	Norm       string  `json:"norm"`
	LNEps      float64 `json:"layer_norm_eps"`
	TiedHead   bool    `json:"tied_head"`
	Linear     string  `json:"linear"`
	Scores     string  `json:"attention_scores"`
}

// exportedPosition is the position section as the model was built with it.
type exportedPosition struct {
	Scheme string `json:"scheme"`
	// Settings are the scheme's resolved fields, snake_cased (the scheme's Go fields, as a
	// checkpoint records them); null for a per-layer scheme, whose layers hold them.
	Settings map[string]any `json:"settings"`
	// Layers are a per-layer scheme's (mix) schemes, one per layer, the pattern repeated.
	Layers []exportedSlot `json:"layers,omitempty"`
	// Scaling is the config's RoPE scaling, applied at evaluation only, null for none.
	Scaling *exportedScaling `json:"scaling"`
	// DistanceMap is the config's distance map (position.distance_map), applied at evaluation
	// only, omitted for none: a loader that does not apply it must refuse the export.
	DistanceMap *exportedMap `json:"distance_map,omitempty"`
	// Config is the position section as the config gives it.
	Config map[string]any `json:"config"`
}

// exportedMap is a distance map as the config gives it: its type and its own fields.
type exportedMap struct {
	Type   string         `json:"type"`
	Params map[string]any `json:"params,omitempty"`
}

type exportedSlot struct {
	Scheme   string         `json:"scheme"`
	Settings map[string]any `json:"settings"`
}

type exportedScaling struct {
	Type string `json:"type"`
	// Factor is "auto" or a number.
	Factor any `json:"factor"`
	// Params are the type's fields, its defaults filled in.
	Params map[string]any `json:"params"`
}

type exportedAttention struct {
	// Scale names the attention temperature, "none" for none.
	Scale    string `json:"scale"`
	TrainLen int    `json:"train_len"`
	// Normaliser is softmax or softpick (model.Softpick).
	Normaliser string `json:"normaliser"`
	// Gate is none, elementwise or headwise (model.Elementwise): gated attention's output gate.
	Gate string `json:"gate"`
	// Sinks says each layer has a sink logit per head, hL.sinks (model.Attention.Sinks).
	Sinks bool `json:"sinks"`
}

type exportedEval struct {
	Lengths     []int  `json:"lengths"`
	Tokens      int    `json:"tokens"`
	BatchTokens int    `json:"batch_tokens"`
	Stride      *int   `json:"stride"`
	Protocol    string `json:"protocol"`
}

// exportedData says how the validation text is made, so that a loader scores the same tokens.
type exportedData struct {
	Corpus string `json:"corpus"`
	Path   string `json:"path,omitempty"`
	// Packages, for gosrc, are the packages read in order, their non-test .go files by name.
	Packages  []string `json:"packages,omitempty"`
	GoVersion string   `json:"go_version,omitempty"`
	// ValidEvery: every ValidEvery-th file of gosrc, or the last 1/ValidEvery of a text
	// (len − len/ValidEvery on), is the validation text.
	ValidEvery int    `json:"valid_every"`
	Split      string `json:"split"`
}

type exportedWeight struct {
	Name  string `json:"name"`
	Shape []int  `json:"shape"`
	// Decay, LRScale and Floor are how train's optimizer treats the weight (model.Param):
	// weight decay or not, the learning rate's multiple, and the least value it may take
	// after an update (null for none).
	Decay   bool     `json:"decay"`
	LRScale float64  `json:"lr_scale"`
	Floor   *float64 `json:"floor"`
}

// weightOf describes a weight of the model for config.json.
func weightOf(p *model.Param) exportedWeight {
	scale := p.LRScale
	if scale == 0 {
		scale = 1
	}
	return exportedWeight{Name: p.Name, Shape: []int(p.Value.Shape().Clone()), Decay: p.Decay, LRScale: scale, Floor: p.Floor}
}

// New makes the export of a trained model: its weights (not the optimizer's state) in the order
// of the checkpoint, and its config.
func New(t *training.Trained) (*Files, error) {
	var ts []safetensors.Tensor
	var weights []exportedWeight
	for _, p := range t.Model.Params {
		shape := []int(p.Value.Shape().Clone())
		switch v := p.Value.Data().(type) {
		case []float32:
			ts = append(ts, safetensors.F32(p.Name, shape, v))
		case []float64:
			ts = append(ts, safetensors.F64(p.Name, shape, v))
		default:
			return nil, fmt.Errorf("export: weight %s is %v", p.Name, p.Value.Dtype())
		}
		weights = append(weights, weightOf(p))
	}
	_, scheme := t.Resolved.Schemes()
	meta := map[string]string{"format": "pt", "program": training.Program, "name": t.Config().Name, "scheme": scheme.Name(), "config": ConfigFile}
	w, err := safetensors.Encode(ts, meta)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	c, err := exportedConfig(t, scheme, weights)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(w)
	c.WeightsSHA256 = hex.EncodeToString(sum[:])
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	return &Files{Weights: w, Config: append(b, '\n')}, nil
}

// exportedConfig describes the trained model, whose evaluation scheme (the config's, with its
// scaling) is scheme.
func exportedConfig(t *training.Trained, scheme position.Scheme, weights []exportedWeight) (*Config, error) {
	c := t.Config()
	mc := t.Resolved.ModelConfig()
	pos, err := exportPosition(c.EvalPhase().Position, scheme, mc.Layers)
	if err != nil {
		return nil, err
	}
	dtype := "float32"
	if t.Model.Dtype == tensor.Float64 {
		dtype = "float64"
	}
	scale, normaliser, gate := c.Attention.Scale, c.Attention.Normaliser, c.Attention.Gate
	if scale == "" {
		scale = "none"
	}
	if gate == "" {
		gate = "none"
	}
	if normaliser == "" {
		normaliser = model.Softmax
	}
	train, err := trainSection(c.Train)
	if err != nil {
		return nil, err
	}
	return &Config{
		Format: Format, Version: Version, Name: c.Name, Dtype: dtype, Partial: t.Progress,
		Model: exportedModel{
			DModel: mc.DModel, Layers: mc.Layers, Heads: mc.Heads, HeadDim: mc.DModel / mc.Heads, Vocab: mc.Vocab,
			MLPHidden: 4 * mc.DModel, Activation: "gelu_tanh", Norm: "pre", LNEps: model.LayerNormEps, TiedHead: false,
			Linear: "x @ W + b, W of shape (in, out)",
			Scores: "q·k/sqrt(head_dim), times the temperature's factor, plus the scheme's bias, causal",
		},
		TrainLen:  c.Train.SeqLen,
		Position:  pos,
		Attention: exportedAttention{Scale: scale, TrainLen: mc.TrainLen, Normaliser: normaliser, Gate: gate, Sinks: c.Attention.Sinks},
		Eval: exportedEval{Lengths: c.Eval.Lengths, Tokens: c.Eval.Tokens, BatchTokens: c.Eval.BatchTokens,
			Stride: c.Eval.Stride, Protocol: c.Eval.Protocol()},
		Data:        exportData(c.Data),
		Train:       train,
		Tokenizer:   training.ByteTokenizer(),
		Weights:     weights,
		TrainConfig: string(c.Marshal()),
	}, nil
}

// trainSection is the train section as JSON takes it: its YAML, every field by its YAML name.
func trainSection(t config.Train) (map[string]any, error) {
	b, err := yaml.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("export: the train section: %w", err)
	}
	var out map[string]any
	if err := yaml.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("export: the train section: %w", err)
	}
	return out, nil
}

// exportPosition describes the position section pc as scheme was built from it.
func exportPosition(pc position.Config, scheme position.Scheme, layers int) (exportedPosition, error) {
	p := exportedPosition{Scheme: scheme.Name(), Config: map[string]any{"scheme": pc.Scheme}}
	if m := pc.DistanceMap; m != nil {
		p.DistanceMap = &exportedMap{Type: m.Type, Params: m.Params}
	}
	for k, v := range pc.Params {
		p.Config[k] = v
	}
	var err error
	if position.IsPerLayer(scheme) {
		for l := 0; l < layers; l++ {
			s := position.InLayer(scheme, l).Scheme
			slot := exportedSlot{Scheme: s.Name()}
			if slot.Settings, err = settingsOf(s); err != nil {
				return p, err
			}
			p.Layers = append(p.Layers, slot)
		}
	} else if p.Settings, err = settingsOf(scheme); err != nil {
		return p, err
	}
	p.Scaling = exportScaling(pc.Scaling)
	return p, nil
}

// exportScaling describes a scaling with its type's defaults filled in; nil for none.
func exportScaling(sc *position.Scaling) *exportedScaling {
	if sc == nil {
		return nil
	}
	out := &exportedScaling{Type: sc.Type, Factor: sc.Factor.String(), Params: map[string]any{}}
	if !sc.Factor.Auto {
		out.Factor = sc.Factor.Value
	}
	for _, d := range position.ScalingParams() {
		if d.Type == sc.Type {
			out.Params[d.Name] = d.Default
		}
	}
	for k, v := range sc.Params {
		out.Params[k] = v
	}
	return out
}

// settingsOf is a scheme's resolved fields, as JSON records them (a checkpoint's meta does
// the same), with snake_case names: RoPE's base, dim (the rotated width), interleaved, stopped
// (p-RoPE's pairs that do not turn), T5's buckets and max_distance, and so on; a sliding
// window is the field window beside them, the keys each query sees with its own.
func settingsOf(s position.Scheme) (map[string]any, error) {
	if inner, wrapped := position.Unwrap(s); wrapped {
		out, err := settingsOf(inner)
		if w := position.WindowOf(s); w > 0 && err == nil {
			out["window"] = w
		}
		return out, err
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("export: the %s scheme's settings: %w", s.Name(), err)
	}
	var fields map[string]any
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, fmt.Errorf("export: the %s scheme's settings: %w", s.Name(), err)
	}
	out := make(map[string]any, len(fields))
	for k, v := range fields {
		out[snakeCase(k)] = v
	}
	return out, nil
}

// snakeCase turns a Go field name into snake_case, an initialism as one word: MaxDistance is
// max_distance, LRScale lr_scale, DModel d_model, L0 l0.
func snakeCase(s string) string {
	r := []rune(s)
	var b strings.Builder
	for i, c := range r {
		if i > 0 && unicode.IsUpper(c) {
			prev := r[i-1]
			nextLower := i+1 < len(r) && unicode.IsLower(r[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || unicode.IsUpper(prev) && nextLower {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}

// exportData describes the corpus and its validation split.
func exportData(c data.Config) exportedData {
	d := exportedData{Corpus: c.Corpus, Path: c.Path, ValidEvery: data.ValidEvery}
	if d.Corpus == "" {
		d.Corpus = "gosrc"
	}
	if d.Corpus == "gosrc" {
		_, d.GoVersion = data.GoRoot()
		d.Packages = data.GoPackages
		d.Split = fmt.Sprintf("the non-test .go files of the packages under $(go env GOROOT)/src, in order, each package's by name; file i (from 0) is validation when i %% %d == %d, concatenated", data.ValidEvery, data.ValidEvery-1)
	} else {
		d.Split = fmt.Sprintf("the text's bytes from len − len/%d (integer division) to the end", data.ValidEvery)
	}
	return d
}
