// Command inspect shows a position scheme's numbers, as JSON, or draws a picture of them: any
// registered scheme, from what it provides (a table, a rotation, a bias), fresh or trained; and
// for a trained scheme that reads the content (FoX, CoPE, stick-breaking), what it made of a text.
//
//	go run ./cmd/inspect -scheme rope -scaling yarn -dim 16 -base 10000 -train-len 128 -eval-len 512 -factor 4 -json
//	go run ./cmd/inspect -scheme alibi -heads 8 -eval-len 32        # draws inspect_alibi_L64_n32_heads8.png
//	go run ./cmd/inspect -checkpoint examples/checkpoints/rope_ntk.ckpt   # a trained checkpoint's scheme
//	go run ./cmd/inspect -checkpoint results/t5/model.ckpt          # a trained scheme's biases, after -config t5
//	go run ./cmd/inspect -checkpoint results/cope/model.ckpt -text-file main.go   # what CoPE counts on a text
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
	"gorgonia.org/tensor"

	"extrapolate/cmd/internal/scalingflag"
	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/training"
	"extrapolate/internal/atomicfile"
	"extrapolate/internal/exit"
	"extrapolate/model"
	_ "extrapolate/plugins" // schemes, tasks and measures from outside, in every command
	"extrapolate/position"
)

// report is what -json prints: the setting, then what the scheme provides, then the numbers
// the scheme describes of itself (position.Describer), such as RoPE's base or T5's buckets.
type report struct {
	Scheme     string `json:"scheme"`
	Checkpoint string `json:"checkpoint,omitempty"`
	// Partial says how far training went when the checkpoint was saved before it finished, as
	// cmd/eval's report does.
	Partial  string `json:"partial,omitempty"`
	Scaling  string `json:"scaling,omitempty"`
	Factor   string `json:"factor,omitempty"`
	Dim      int    `json:"dim"`
	Heads    int    `json:"heads"`
	Layers   int    `json:"layers"`
	TrainLen int    `json:"train_len"`
	EvalLen  int    `json:"eval_len"`
	// A rotation: frequencies in radians per position, their wavelengths in positions (null
	// for a pair that does not turn, p-RoPE's stopped ones), and the factor that scales cos and
	// sin.
	InvFreq         []float64  `json:"inv_freq,omitempty"`
	Wavelengths     []*float64 `json:"wavelengths,omitempty"`
	AttentionFactor float64    `json:"attention_factor,omitempty"`
	// Critical is the critical dimension of the rotation without its scaling, trained at
	// train_len (position.Critical, Liu et al. 2024): the rotated dimensions whose period fits
	// in the training length, and the period of the first pair that does not, T_extra, the
	// predicted limit (null for none).
	Critical *critical `json:"critical,omitempty"`
	// A bias, by distance: Bias[layer][head][δ] for the last query, at eval_len-1, and the key δ
	// back. A fixed bias has one layer.
	Bias [][][]float64 `json:"bias,omitempty"`
	// A table added to the embeddings: eval_len rows of the model's width.
	Table [][]float64 `json:"table,omitempty"`
	// A scheme per layer (position.PerLayer): each layer's scheme, shown as above.
	PerLayer []*report `json:"per_layer,omitempty"`
	// Content is what the layers whose scheme reads the content (FoX, CoPE, stick-breaking) made
	// of a text, with a checkpoint (content.go).
	Content *content `json:"content,omitempty"`

	described map[string]any
	plain     *position.Rotation // the rotation without its scaling, for the picture
	// readsContent says that some layer's scheme reads the content, which a fresh scheme
	// cannot show.
	readsContent bool
}

// critical is position.Critical as -json prints it, T_extra null for no limit, with whether Men
// et al.'s long-term decay B(m) = Σ cos(m·θ_i) stays non-negative up to train_len: whether the
// base is at or above their lower bound for that length (position.DecayHolds).
type critical struct {
	Dimension  int      `json:"dimension"`
	Rotated    int      `json:"rotated"`
	TExtra     *float64 `json:"t_extra"`
	DecayHolds bool     `json:"decay_holds"`
}

// Size bounds: far beyond any picture or table worth looking at, and small enough that a typo
// cannot ask for gigabytes.
const (
	maxDim     = 1 << 12
	maxHeads   = 64
	maxLayers  = 64
	maxEvalLen = 1 << 14
	maxValues  = 1 << 24 // values of a table, or of a bias by distance for every layer and head
	maxCells   = 1 << 20 // cells of a heat map, which take a few seconds to draw
	// maxWork bounds the values a scheme computes (config.PositionCost.Values), so that no
	// setting runs for minutes: 64 layers of FIRE's bias at 64 heads and 4096 positions are
	// 6.9e10 values, about 16 minutes. FIRE is the costliest per value, an MLP at every query
	// and key; 2^30 of its values take about 17 s.
	maxWork = 1 << 30
	// fireRate is FIRE's values a second, measured with -heads 16 -layers 2 -eval-len 2048 on
	// the 2-core AMD EPYC (134 million in 2.0 s): for the estimate in the message.
	fireRate = 65e6
)

// duration estimates the time to compute v values at FIRE's rate.
func duration(v int64) string {
	sec := float64(v) / fireRate
	if sec < 120 {
		return fmt.Sprintf("%.0f s", sec)
	}
	return fmt.Sprintf("%.0f min", sec/60)
}

func main() { os.Exit(run()) }

// options are the command's flags, parsed.
type options struct {
	scheme, scaling, factor string
	dim, heads, layers      int
	base                    float64
	trainLen, evalLen       int
	checkpoint, out         string
	text, textFile          string
	asJSON, overwrite       bool
	params                  paramFlags
	fields                  *scalingflag.Set
	// given holds the flags set on the command line, so that an empty -text is told from none.
	given map[string]bool
	// defaults holds each flag's default value, as its Value prints it, for outName.
	defaults map[string]string
}

// parseFlags reads the command line into options, or says on one line what is wrong with it.
func parseFlags(c *exit.Command) (*options, error) {
	o := &options{given: map[string]bool{}}
	flag.StringVar(&o.scheme, "scheme", "rope", "position scheme: "+strings.Join(position.Names(), ", "))
	flag.StringVar(&o.scaling, "scaling", "none", "RoPE scaling: none or "+strings.Join(position.ScalingTypes(), ", "))
	m, heads := configs.Model, configs.Model.Heads
	configFlag(&o.dim, "dim", m.DModel/heads, "head dimension; the model width is dim × heads", fmt.Sprintf("d_model %d over %d heads", m.DModel, heads))
	configFlag(&o.heads, "heads", heads, "attention heads", "")
	configFlag(&o.layers, "layers", m.Layers, "layers, for schemes with weights per layer", "")
	flag.Float64Var(&o.base, "base", 10000, "RoPE's base")
	configFlag(&o.trainLen, "train-len", configs.Train.SeqLen, "training length L", "train.seq_len")
	flag.IntVar(&o.evalLen, "eval-len", 512, "evaluation length n")
	flag.StringVar(&o.factor, "factor", "auto", "scaling factor: a number ≥ 1, or auto = max(1, n/L)")
	flag.StringVar(&o.checkpoint, "checkpoint", "", "a trained model's checkpoint: show its scheme with the trained weights")
	flag.StringVar(&o.text, "text", "", "with -checkpoint, the text a scheme that reads the content (fox, cope, stickbreaking) is shown on (default a few lines of Go)")
	flag.StringVar(&o.textFile, "text-file", "", "a file whose bytes are that text, instead of -text")
	flag.BoolVar(&o.asJSON, "json", false, "print the numbers as JSON instead of drawing")
	flag.StringVar(&o.out, "out", "", "picture file (default: named after the inputs, inspect_<scheme>[_<scaling>]_L<train-len>_n<eval-len>[_<flag><value>...].png, the last for each other flag not at its default; with -checkpoint, inspect_<run folder or file stem>_n<eval-len>.png)")
	flag.BoolVar(&o.overwrite, "overwrite", false, "replace the picture file if it exists")
	o.fields = scalingflag.Register(flag.CommandLine)
	flag.Var(&o.params, "param", "a field of the scheme, name=value (repeatable), e.g. -param buckets=16")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: inspect [-scheme NAME | -checkpoint FILE] [-scaling TYPE] [-heads N] [-eval-len N] [-json] [-out FILE]\n\n")
		flag.PrintDefaults()
	}
	o.defaults = map[string]string{}
	flag.VisitAll(func(f *flag.Flag) { o.defaults[f.Name] = f.Value.String() })
	if err := c.Parse(flag.CommandLine, os.Args[1:]); err != nil {
		return nil, err
	}
	flag.Visit(func(f *flag.Flag) { o.given[f.Name] = true })
	return o, nil
}

// configs is the config every file in configs/ is read on top of, and whose model and training
// length each of them trains: a fresh scheme is shown by default at the size a run trains it.
var configs = config.Default()

// configFlag defines an int flag whose default is the configs' value, saying so (and what it
// comes from, if not the config field of the same name) in its description instead of the flag
// package's plain "(default N)".
func configFlag(p *int, name string, value int, usage, from string) {
	if from != "" {
		from = ", " + from
	}
	flag.IntVar(p, name, value, fmt.Sprintf("%s (default: the configs' %d%s)", usage, value, from))
	// A DefValue of the type's zero is what keeps flag.PrintDefaults from adding its own
	// "(default N)"; nothing else reads it (the default output's name compares with
	// options.defaults).
	flag.Lookup(name).DefValue = "0"
}

// outName is the picture's name when -out is not given: named after the inputs, so that two
// different inspections in one folder do not take the same name. For a scheme,
// inspect_<scheme>[_<scaling>]_L<train-len>_n<eval-len>, then each other flag that changes what
// is shown and is set to a value other than its default, in the flags' order, as _<flag><value>
// (_heads8, _param-buckets16), the value replaced by a hash where it is long or not plain
// (-param layers=[rope, nope]); for a checkpoint, inspect_<run>_n<eval-len>, the run being the
// checkpoint's folder for a run's model.ckpt, or its file name without the extension, then
// -text or -text-file as above.
func (o *options) outName(scheme string) string {
	parts := []string{"inspect"}
	if o.checkpoint != "" {
		parts = append(parts, checkpointName(o.checkpoint), fmt.Sprintf("n%d", o.evalLen))
	} else {
		parts = append(parts, scheme)
		if o.scaling != "none" {
			parts = append(parts, o.scaling)
		}
		parts = append(parts, fmt.Sprintf("L%d", o.trainLen), fmt.Sprintf("n%d", o.evalLen))
	}
	flag.VisitAll(func(f *flag.Flag) {
		switch {
		case f.Name == "scheme" || f.Name == "scaling" || f.Name == "train-len" || f.Name == "eval-len",
			f.Name == "checkpoint" || f.Name == "json" || f.Name == "out" || f.Name == "overwrite":
			return // in the name already, or not what is shown
		case f.Name == "base" && o.scheme != "rope", f.Name == "factor" && o.scaling == "none":
			return // not read
		case f.Name == "param":
			for _, k := range o.params.keys() {
				parts = append(parts, namePart("param-"+k, o.params.raw[k]))
			}
		case f.Value.String() != o.defaults[f.Name]:
			parts = append(parts, namePart(f.Name, f.Value.String()))
		}
	})
	return strings.Join(parts, "_") + ".png"
}

// plainValue is a flag's value written into a file name as it is.
var plainValue = regexp.MustCompile(`^[A-Za-z0-9.+-]{1,24}$`)

// namePart is a flag and its value in a file name: heads8, factor2.5, text-file-main.go, or,
// for a value that is long or holds characters a file name should not,
// text-1f3a9c2e, the FNV-1a hash of the value.
func namePart(name, value string) string {
	if !plainValue.MatchString(value) {
		h := fnv.New32a()
		h.Write([]byte(value))
		return fmt.Sprintf("%s-%08x", name, h.Sum32())
	}
	if c := value[0]; 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
		return name + "-" + value
	}
	return name + value
}

// checkpointName names a checkpoint in the default output's name: the run's folder for a run's
// model.ckpt (results/t5/model.ckpt: t5), or the file's name without its extension
// (examples/checkpoints/rope_ntk.ckpt: rope_ntk).
func checkpointName(path string) string {
	base := filepath.Base(path)
	if base == measure.CheckpointFile {
		if abs, err := filepath.Abs(path); err == nil {
			if dir := filepath.Base(filepath.Dir(abs)); dir != string(filepath.Separator) && dir != "." {
				return dir
			}
		}
	}
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// run inspects what the flags ask for and returns the exit code: 2 for anything the input
// gets wrong, 1 for a picture that could not be written, 130 when interrupted, having printed
// and written nothing.
func run() int {
	c := exit.New("inspect", os.Stderr)
	// What follows reads, computes for up to about 17 s (maxWork) and draws, then prints or
	// writes: a signal stops it before the output.
	_, stop := c.Signals("stopping: nothing will be written")
	defer stop()
	o, err := parseFlags(c)
	fail := c.Bad
	if err != nil {
		return fail(err)
	}
	if err := o.check(); err != nil {
		return fail(err)
	}
	spec, trained, err := o.setting()
	if err != nil {
		return fail(err)
	}
	var m *model.Model
	partial := ""
	if trained != nil {
		m, partial = trained.Model, trained.Progress
	}
	s, err := position.New(spec)
	if err != nil {
		return fail(flagNames(err))
	}
	path := o.out
	if path == "" {
		path = o.outName(s.Name())
	}
	if !o.asJSON {
		// Before computing and drawing, so that a picture with nowhere to go costs nothing.
		if err := checkOut(path, o.overwrite); err != nil {
			return fail(err)
		}
	}
	if err := position.CheckLength(s, o.evalLen); err != nil {
		return fail(flagNames(err))
	}
	if err := o.checkCost(spec, s); err != nil {
		return fail(err)
	}
	if m == nil {
		// A fresh scheme's weights as a model would draw them, from seed 1.
		if m, err = model.New(model.Config{DModel: spec.DModel, Layers: spec.Layers, Heads: spec.Heads, Vocab: 1, TrainLen: spec.TrainLen}, s, tensor.Float64, 1); err != nil {
			return fail(err)
		}
	}
	rep, err := describeModel(s, spec, m, o.evalLen)
	if err != nil {
		return fail(err)
	}
	rep.Checkpoint, rep.Partial = o.checkpoint, partial
	if rep.Content, err = o.content(trained, s, spec.Layers); err != nil {
		return fail(err)
	}
	rep.readsContent = len(readsContent(s, spec.Layers)) > 0
	if t := rep.Table; !o.asJSON && len(t) > 0 && len(t)*len(t[0]) > maxCells {
		return fail(fmt.Errorf("-dim and -eval-len: a table of %d × %d to draw, above the limit of %d cells; use -json or fewer", len(t), len(t[0]), maxCells))
	}
	if o.asJSON {
		b, err := rep.json()
		if err != nil {
			return fail(err)
		}
		if err := c.Write(func() error { _, err := fmt.Println(string(b)); return err }); err != nil {
			return c.Fail(err)
		}
		return 0
	}
	png, err := picture(rep)
	if err != nil {
		return fail(err)
	}
	if err := c.Write(func() error { return atomicfile.WriteFile(path, png) }); err != nil {
		return c.Fail(err)
	}
	if partial != "" {
		// As cmd/eval says it: these are not the weights of a finished run.
		fmt.Printf("partly trained: checkpoint saved at %s\n", partial)
	}
	fmt.Println("wrote", path)
	return 0
}

// check refuses arguments and sizes out of bounds, each by its flag, before anything is made.
func (o *options) check() error {
	if o.params.err != nil {
		return o.params.err
	}
	switch {
	case o.dim <= 0 || o.dim > maxDim:
		return fmt.Errorf("-dim: %d, want 1 to %d", o.dim, maxDim)
	case o.heads <= 0 || o.heads > maxHeads:
		return fmt.Errorf("-heads: %d, want 1 to %d", o.heads, maxHeads)
	case o.layers <= 0 || o.layers > maxLayers:
		return fmt.Errorf("-layers: %d, want 1 to %d", o.layers, maxLayers)
	case o.trainLen <= 0 || o.trainLen > maxEvalLen:
		return fmt.Errorf("-train-len: %d, want 1 to %d", o.trainLen, maxEvalLen)
	case o.evalLen <= 0 || o.evalLen > maxEvalLen:
		return fmt.Errorf("-eval-len: %d, want 1 to %d", o.evalLen, maxEvalLen)
	case o.evalLen*o.dim*o.heads > maxValues:
		return fmt.Errorf("-eval-len: %d positions × %d × %d heads is above %d values", o.evalLen, o.dim, o.heads, maxValues)
	}
	return nil
}

// setting is the scheme's spec: a checkpoint's, with the trained model, or the one the flags
// describe, with no model yet.
func (o *options) setting() (spec position.Spec, t *training.Trained, err error) {
	if o.checkpoint != "" {
		return o.checkpointSetting()
	}
	for _, f := range []string{"text", "text-file"} {
		if o.given[f] {
			return spec, nil, fmt.Errorf("-%s: needs -checkpoint: a text is read by a trained model", f)
		}
	}
	pc := position.Config{Scheme: o.scheme, Params: o.params.values}
	if _, ok := o.params.values["base"]; ok && o.scheme == "rope" {
		// -base would replace it silently: one field, one flag.
		return spec, nil, errors.New("-param base: give RoPE's base as -base")
	}
	if o.scheme == "rope" {
		pc = pc.With("base", o.base)
	}
	if o.scaling != "none" {
		f, err := position.ParseFactor(o.factor)
		if err != nil {
			return spec, nil, fmt.Errorf("-factor: %v", err)
		}
		pc.Scaling = o.fields.Scaling(o.scaling, f)
	}
	if u := o.fields.Unused([]string{o.scaling}); u != "" {
		return spec, nil, fmt.Errorf("%s: the scaling %s does not take it", u, o.scaling)
	}
	spec = position.Spec{DModel: o.dim * o.heads, Heads: o.heads, Layers: o.layers, TrainLen: o.trainLen, Config: pc}
	return spec, nil, nil
}

// checkpointSetting loads the checkpoint, refusing the flags that describe a scheme: its config
// gives the scheme, and a flag that silently did nothing would mislead.
func (o *options) checkpointSetting() (spec position.Spec, t *training.Trained, err error) {
	var setting []string
	flag.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "checkpoint", "eval-len", "json", "out", "text", "text-file":
		default:
			setting = append(setting, "-"+f.Name)
		}
	})
	if len(setting) > 0 {
		return spec, nil, fmt.Errorf("%s: not with -checkpoint, whose config gives the scheme", setting[0])
	}
	if t, err = training.LoadCheckpoint(o.checkpoint); err != nil {
		return spec, nil, err
	}
	c := t.Config()
	return c.Spec(c.EvalPhase().Position), t, nil
}

// content shows what the layers of a trained model whose scheme reads the content made of the
// text: nil without a checkpoint, or for a scheme that reads none, which refuses a text given.
func (o *options) content(t *training.Trained, s position.Scheme, layers int) (*content, error) {
	if t == nil {
		return nil, nil
	}
	text, from, err := o.readText()
	if err != nil {
		return nil, err
	}
	if len(readsContent(s, layers)) == 0 {
		if o.given["text"] || o.given["text-file"] {
			return nil, fmt.Errorf("%s: the %s scheme reads nothing from the content; a text is for fox, cope and stickbreaking", from, s.Name())
		}
		return nil, nil
	}
	return contentOf(t, s, text, from)
}

// checkCost refuses a setting whose numbers would take too much memory or time to compute or
// show. It runs before the model is made and the scheme asked for anything: FIRE's bias alone
// is heads × n² values a layer, 137 GB at 64 heads and 16384 positions.
func (o *options) checkCost(spec position.Spec, s position.Scheme) error {
	flags := "-dim, -heads, -layers and -eval-len"
	if o.checkpoint != "" {
		flags = "-eval-len (with the checkpoint's model)"
	}
	n := o.evalLen
	cost, err := config.CheckInspect(spec, s, n, flags)
	if err != nil {
		return err
	}
	if shown := int64(spec.Layers) * int64(spec.Heads) * int64(n); cost.Bias > 0 && shown > maxValues {
		return fmt.Errorf("%s: a bias of %d layers × %d heads × %d positions to show is above %d values", flags, spec.Layers, spec.Heads, n, maxValues)
	}
	if cost.Values > maxWork {
		return fmt.Errorf("%s: the %s scheme would compute %.3g values at %d positions (%d layers × %d heads), about %s at FIRE's %.0f million a second, above the limit of %.3g (%s); use fewer",
			flags, s.Name(), float64(cost.Values), n, spec.Layers, spec.Heads, duration(cost.Values), fireRate/1e6, float64(maxWork), duration(maxWork))
	}
	return nil
}

// describeModel reports the scheme s of model m at n positions: a scheme per layer
// (position.PerLayer) as one report per layer, each with that layer's weights.
func describeModel(s position.Scheme, spec position.Spec, m *model.Model, n int) (*report, error) {
	if !position.IsPerLayer(s) {
		return describe(s, spec, m.SchemeWeights(0), n)
	}
	rep := &report{Scheme: s.Name(), Dim: spec.HeadDim(), Heads: spec.Heads, Layers: spec.Layers, TrainLen: spec.TrainLen, EvalLen: n}
	one := spec
	one.Layers = 1
	for l := 0; l < spec.Layers; l++ {
		in := position.InLayer(s, l)
		r, err := describe(in.Scheme, one, m.SchemeWeights(in.Owner), n)
		if err != nil {
			return nil, err
		}
		rep.PerLayer = append(rep.PerLayer, r)
	}
	return rep, nil
}

// checkOut refuses a picture file that cannot be written: one whose folder does not exist or
// cannot be written in, that names a folder, or that exists, unless overwrite says to replace it.
func checkOut(path string, overwrite bool) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("-out %s: a folder, want a picture file's name", path)
	} else if err == nil && !overwrite {
		return fmt.Errorf("-out %s: the file exists; give -overwrite to replace it, or another -out", path)
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("-out %s: folder %s does not exist", path, dir)
	case err != nil:
		return fmt.Errorf("-out %s: %w", path, err)
	case !st.IsDir():
		return fmt.Errorf("-out %s: %s is not a folder", path, dir)
	}
	f, err := os.CreateTemp(dir, ".writable*")
	if err != nil {
		return fmt.Errorf("-out %s: cannot write in %s", path, dir)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// describe asks the scheme what it adds at n positions, through the position package's adapter
// over the optional interfaces it implements.
func describe(s position.Scheme, spec position.Spec, w [][]float64, n int) (*report, error) {
	if spec.Config.Scheme != s.Name() {
		spec.Config = position.Config{Scheme: s.Name(), Scaling: spec.Config.Scaling}
	}
	rep := &report{Scheme: s.Name(), Dim: spec.HeadDim(), Heads: spec.Heads, Layers: spec.Layers, TrainLen: spec.TrainLen, EvalLen: n}
	if sc := spec.Config.Scaling; sc != nil {
		rep.Scaling, rep.Factor = sc.Type, sc.Factor.String()
	}
	rep.described = position.Describe(s, n)
	rot, err := position.RotationAt(s, n)
	if err != nil {
		return nil, err
	}
	if rot != nil {
		rep.InvFreq, rep.AttentionFactor = rot.InvFreq, rot.AttentionFactor
		for _, f := range rot.InvFreq {
			var w *float64 // null: a stopped pair turns by 0, its wavelength has no number
			if f != 0 {
				w = new(2 * math.Pi / f)
			}
			rep.Wavelengths = append(rep.Wavelengths, w)
		}
		rep.plain = rot
		plain := s
		if spec.Config.Scaling != nil {
			spec.Config.Scaling = nil
			if plain, err = position.New(spec); err != nil {
				return nil, err
			}
			if rep.plain, err = position.RotationAt(plain, n); err != nil {
				return nil, err
			}
		}
		c, _, err := position.CriticalOf(plain, spec.TrainLen)
		if err != nil {
			return nil, err
		}
		trained, err := position.RotationAt(plain, spec.TrainLen)
		if err != nil {
			return nil, err
		}
		rep.Critical = &critical{Dimension: c.Dimension, Rotated: c.Rotated, DecayHolds: position.DecayHolds(trained.InvFreq, spec.TrainLen)}
		if !math.IsInf(c.TExtra, 1) {
			rep.Critical.TExtra = &c.TExtra
		}
	}
	table, err := position.TableAt(s, w, n)
	if err != nil {
		return nil, err
	}
	if table != nil {
		for i := 0; i < min(n, table.Rows); i++ {
			rep.Table = append(rep.Table, table.Values[i*table.Cols:(i+1)*table.Cols])
		}
	}
	byDistance := func(b *position.Bias) [][]float64 {
		out := make([][]float64, b.Heads)
		for h := range out {
			out[h] = make([]float64, n)
			for d := range out[h] {
				out[h][d] = b.At(h, n-1, n-1-d)
			}
		}
		return out
	}
	form, err := position.BiasForm(s)
	if err != nil {
		return nil, err
	}
	layers := spec.Layers // a learned bias differs by layer; a fixed one is the same in each
	if form == position.Fixed {
		layers = 1
	}
	for l := 0; form != position.Absent && l < layers; l++ {
		b, err := position.BiasAt(s, w, l, n)
		if err != nil {
			return nil, err
		}
		rep.Bias = append(rep.Bias, byDistance(b))
	}
	return rep, nil
}

// json is the report with the scheme's own description merged in.
func (r *report) json() ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k, v := range r.described {
		if _, taken := m[k]; !taken {
			m[k] = v
		}
	}
	return json.MarshalIndent(m, "", "  ")
}

// paramFlags collects -param name=value, each value read as YAML. A bad one is kept in err, to
// be reported on one line after parsing rather than with the flag package's usage text.
type paramFlags struct {
	values map[string]any
	raw    map[string]string // each value as given, for the output's name
	err    error
}

func (p *paramFlags) String() string { return "" }

// keys are the names of the fields given, in order.
func (p *paramFlags) keys() []string {
	return slices.Sorted(maps.Keys(p.raw))
}

func (p *paramFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	switch {
	case p.err != nil:
	case !ok || k == "":
		p.err = fmt.Errorf("-param %q: want name=value, e.g. buckets=16", s)
	case strings.TrimSpace(v) == "":
		// An unset shell variable, most likely, as for train's -set.
		p.err = fmt.Errorf("-param %s: empty value; give one", k)
	default:
		if p.values == nil {
			p.values, p.raw = map[string]any{}, map[string]string{}
		}
		p.values[k], p.raw[k] = yamlValue(v), v
	}
	return nil
}

// flagNames rewords a config error for the command line.
func flagNames(err error) error {
	msg := err.Error()
	for _, p := range position.ScalingParams() {
		if f := "position.scaling." + p.Name; strings.HasPrefix(msg, f) {
			return errors.New("-" + scalingflag.Flag(p.Name) + msg[len(f):])
		}
	}
	for _, r := range [][2]string{
		{"position.scaling.type", "-scaling"}, {"position.scaling.factor", "-factor"},
		{"position.scaling", "-scaling"}, {"position.scheme", "-scheme"}, {"position.base", "-base"}, {"position.", "-param "},
	} {
		if strings.HasPrefix(msg, r[0]) {
			return errors.New(r[1] + msg[len(r[0]):])
		}
	}
	return err
}

// yamlValue reads a -param value as YAML would (a number, a boolean, a list), or as a string.
func yamlValue(s string) any {
	var v any
	if err := yaml.Unmarshal([]byte(s), &v); err != nil || v == nil {
		return s
	}
	return v
}
