package main

import (
	"crypto/sha256"
	le "encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"extrapolate/experiments/config"
	"extrapolate/experiments/export"
	"extrapolate/experiments/training"
	"extrapolate/internal/cmdtest"
	"extrapolate/internal/exporttest"
	"extrapolate/internal/safetensors"
	"extrapolate/position"
)

var binary string

func TestMain(m *testing.M) { cmdtest.Main(m, "import", &binary) }

// exportTo writes the export of the checkpoint into dir, as cmd/export does.
func exportTo(t *testing.T, ckpt, dir string) {
	t.Helper()
	tr, err := training.LoadCheckpoint(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	e, err := export.New(tr)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, export.WeightsFile), e.Weights)
	writeFile(t, filepath.Join(dir, export.ConfigFile), e.Config)
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// importTo runs the command on the export in dir into a checkpoint out, which it must write.
func importTo(t *testing.T, dir, out string, flags ...string) string {
	t.Helper()
	code, stdout, stderr := cmdtest.Run(t, binary, "", append([]string{"-export", dir, "-out", out}, flags...)...)
	if code != 0 || !strings.HasPrefix(stdout, "imported "+dir) {
		t.Fatalf("import %s: exit %d, stdout %q, stderr %q", dir, code, stdout, stderr)
	}
	return stdout
}

// TestImportOfExport reads cmd/export's own export back: the checkpoint has the original's
// config to the byte, the same weights to the bit, and cmd/eval scores it the same, for a
// learned bias with a temperature of its own and for a RoPE/KERPLE mix with its config's
// YaRN scaling.
func TestImportOfExport(t *testing.T) {
	for name, set := range map[string]func(c *config.Config){
		"t5_ssmax": func(c *config.Config) {
			c.Position, c.Attention.Scale = position.Config{Scheme: "t5"}, "ssmax"
		},
		"mix_yarn": func(c *config.Config) {
			c.Position = position.Config{Scheme: "mix", Params: map[string]any{"layers": []any{"rope", "kerple"}},
				Scaling: &position.Scaling{Type: "yarn", Factor: position.Factor{Auto: true}}}
		},
	} {
		t.Run(name, func(t *testing.T) {
			ckpt := exporttest.TrainTiny(t, set)
			dir := filepath.Join(t.TempDir(), "export")
			exportTo(t, ckpt, dir)
			out := filepath.Join(t.TempDir(), "imported.ckpt")
			importTo(t, dir, out)
			was, err := training.LoadCheckpoint(ckpt)
			if err != nil {
				t.Fatal(err)
			}
			got, err := training.LoadCheckpoint(out)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Finished || string(got.Config().Marshal()) != string(was.Config().Marshal()) {
				t.Errorf("finished %v, config\n%s\nwant\n%s", got.Finished, got.Config().Marshal(), was.Config().Marshal())
			}
			for i, p := range was.Model.Params {
				q := got.Model.Params[i]
				if q.Name != p.Name || string(q.Value.Raw) != string(p.Value.Raw) {
					t.Fatalf("weight %d: %s, want %s with the same bytes", i, q.Name, p.Name)
				}
			}
			want, have := exporttest.EvalScores(t, ckpt, nil), exporttest.EvalScores(t, out, nil)
			// fmt prints every float64 in full, maps in key order and NaN as NaN.
			if fmt.Sprint(have) != fmt.Sprint(want) {
				t.Errorf("cmd/eval's losses: %v, want %v", have, want)
			}
		})
	}
}

// editConfig rewrites config.json of the export in dir as edit changes it.
func editConfig(t *testing.T, dir string, edit func(c map[string]any)) {
	t.Helper()
	path := filepath.Join(dir, export.ConfigFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	edit(c)
	if b, err = json.Marshal(c); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, b)
}

// editWeights rewrites the export's model.safetensors as edit changes its tensors, encoded by
// encode, and its checksum in config.json, so that only the tensors are wrong.
func editWeights(t *testing.T, dir string, edit func(ts []safetensors.Tensor) []safetensors.Tensor, encode func([]safetensors.Tensor) []byte) {
	t.Helper()
	path := filepath.Join(dir, export.WeightsFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ts, _, err := safetensors.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	b = encode(edit(ts))
	writeFile(t, path, b)
	sum := sha256.Sum256(b)
	editConfig(t, dir, func(c map[string]any) { c["weights_sha256"] = hex.EncodeToString(sum[:]) })
}

// encode is safetensors.Encode, which refuses what the format does not allow.
func encode(t *testing.T) func([]safetensors.Tensor) []byte {
	return func(ts []safetensors.Tensor) []byte {
		b, err := safetensors.Encode(ts, nil)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

// encodeAnyDtype writes safetensors by hand from the format's spec, for a dtype Encode does not
// write (BF16, two bytes an element): the reader must refuse it by name.
func encodeAnyDtype(ts []safetensors.Tensor) []byte {
	header, data := map[string]any{}, []byte{}
	for _, x := range ts {
		header[x.Name] = map[string]any{"dtype": x.Dtype, "shape": x.Shape, "data_offsets": []int{len(data), len(data) + len(x.Data)}}
		data = append(data, x.Data...)
	}
	h, _ := json.Marshal(header)
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	return append(append(le.LittleEndian.AppendUint64(nil, uint64(len(h))), h...), data...)
}

// without is ts without the tensor named name.
func without(ts []safetensors.Tensor, name string) []safetensors.Tensor {
	var out []safetensors.Tensor
	for _, x := range ts {
		if x.Name != name {
			out = append(out, x)
		}
	}
	return out
}

// TestImportBadInput checks that every bad flag, folder, config.json and weights file is
// refused with exit status 2 and one line naming the flag, file, field or weight, and that
// nothing is written; and that a checkpoint is replaced only with -overwrite.
func TestImportBadInput(t *testing.T) {
	good := filepath.Join(t.TempDir(), "export")
	exportTo(t, exporttest.TrainTiny(t, func(c *config.Config) { c.Position = position.Config{Scheme: "kerple"} }), good)
	cfg := func(edit func(c map[string]any)) func(string) {
		return func(dir string) { editConfig(t, dir, edit) }
	}
	section := func(c map[string]any, key string) map[string]any { return c[key].(map[string]any) }
	weights := func(edit func(ts []safetensors.Tensor) []safetensors.Tensor) func(string) {
		return func(dir string) { editWeights(t, dir, edit, encode(t)) }
	}
	for _, c := range []struct {
		name string
		args []string // instead of -export DIR -out FILE
		edit func(dir string)
		want string
	}{
		{name: "no -export", args: []string{}, want: "-export: missing"},
		{name: "an argument", args: []string{"-export", good, "extra"}, want: `unexpected argument "extra"`},
		{name: "an unknown flag", args: []string{"-export", good, "-bogus"}, want: "-bogus"},
		{name: "no folder", args: []string{"-export", filepath.Join(good, "none")}, want: "none/config.json"},
		{name: "config.json not JSON", edit: func(dir string) { writeFile(t, filepath.Join(dir, "config.json"), []byte("{")) }, want: "config.json: not a JSON object"},
		{name: "another format", edit: cfg(func(c map[string]any) { c["format"] = "gguf" }), want: `format "gguf"`},
		{name: "no train_config", edit: cfg(func(c map[string]any) { delete(c, "train_config") }), want: "train_config: missing"},
		{name: "a dtype unknown", edit: cfg(func(c map[string]any) { c["dtype"] = "bfloat16" }), want: `dtype "bfloat16"`},
		{name: "partial", edit: cfg(func(c map[string]any) { c["partial"] = "train step 0 of 150" }), want: "partial: saved at train step 0 of 150"},
		{name: "a scheme unknown", edit: cfg(func(c map[string]any) {
			c["train_config"] = strings.Replace(c["train_config"].(string), "scheme: kerple", "scheme: nosuch", 1)
		}), want: `unknown scheme "nosuch"`},
		{name: "another scheme", edit: cfg(func(c map[string]any) { section(c, "position")["scheme"] = "alibi" }), want: `position.scheme: "alibi", the config builds "kerple"`},
		{name: "another width", edit: cfg(func(c map[string]any) { section(c, "model")["d_model"] = 32 }), want: "model.d_model: 32, the config builds 16"},
		{name: "a setting added", edit: cfg(func(c map[string]any) { section(section(c, "position"), "settings")["slope"] = 2 }), want: "position.settings.slope: 2, which the config does not have"},
		{name: "other lengths", edit: cfg(func(c map[string]any) { section(c, "eval")["lengths"] = []int{16} }), want: "eval.lengths: [16], the config builds [16,32,64]"},
		{name: "a fine-tune too short", edit: cfg(func(c map[string]any) {
			section(c, "train")["finetune"] = map[string]any{"seq_len": 8, "steps": 1}
		}), want: "train.finetune.seq_len: 8"},
		{name: "a scaling for a bias", edit: cfg(func(c map[string]any) {
			section(c, "position")["scaling"] = map[string]any{"type": "yarn", "factor": 2, "params": map[string]any{}}
		}), want: "with config.json's train and scaling): position.scaling: the kerple scheme does not take a scaling"},
		{name: "weights not config.json's", edit: func(dir string) {
			writeFile(t, filepath.Join(dir, "model.safetensors"), encode(t)([]safetensors.Tensor{safetensors.F32("wte", []int{1}, []float32{1})}))
		}, want: "SHA-256"},
		{name: "a dtype the reader lacks", edit: func(dir string) {
			editWeights(t, dir, func(ts []safetensors.Tensor) []safetensors.Tensor {
				ts[0].Dtype, ts[0].Data = "BF16", ts[0].Data[:len(ts[0].Data)/2]
				return ts
			}, encodeAnyDtype)
		}, want: `tensor "wte": dtype "BF16"`},
		{name: "another shape", edit: weights(func(ts []safetensors.Tensor) []safetensors.Tensor {
			ts[0].Shape, ts[0].Data = []int{255, 16}, ts[0].Data[:255*16*4]
			return ts
		}), want: "weight wte has shape [255 16], the config's model has [256 16]"},
		{name: "a weight missing", edit: weights(func(ts []safetensors.Tensor) []safetensors.Tensor { return without(ts, "kerple.r2") }), want: "no weight kerple.r2"},
		{name: "a weight too many", edit: weights(func(ts []safetensors.Tensor) []safetensors.Tensor {
			return append(ts, safetensors.F32("extra", []int{1}, []float32{0}))
		}), want: "weight extra, which the config's model does not have"},
		{name: "float32 weights said float64", edit: cfg(func(c map[string]any) { c["dtype"] = "float64" }), want: "says dtype float64"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "export")
			if err := os.CopyFS(dir, os.DirFS(good)); err != nil {
				t.Fatal(err)
			}
			if c.edit != nil {
				c.edit(dir)
			}
			out := filepath.Join(t.TempDir(), "model.ckpt")
			args := c.args
			if args == nil {
				args = []string{"-export", dir}
			}
			code, stdout, stderr := cmdtest.Run(t, binary, "", append(args, "-out", out)...)
			msg := strings.TrimSpace(stderr)
			if code != 2 || stdout != "" || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") || strings.Contains(msg, "panic") {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and one line containing %q", code, stdout, msg, c.want)
			}
			if _, err := os.Lstat(out); err == nil {
				t.Errorf("wrote %s", out)
			}
		})
	}

	out := filepath.Join(t.TempDir(), "model.ckpt")
	importTo(t, good, out)
	if code, _, stderr := cmdtest.Run(t, binary, "", "-export", good, "-out", out); code != 2 || !strings.Contains(stderr, "exists; use -overwrite") {
		t.Errorf("a second import: exit %d, %q; want 2 and -overwrite named", code, stderr)
	}
	importTo(t, good, out, "-overwrite")
	if code, _, stderr := cmdtest.Run(t, binary, "", "-export", good, "-out", filepath.Dir(out), "-overwrite"); code != 2 || !strings.Contains(stderr, "is a folder") {
		t.Errorf("-out a folder: exit %d, %q; want 2 and the folder named", code, stderr)
	}
}

// TestImportFloat64 imports weights saved in float64, as pytorch/train.py --dtype float64
// saves them: rounded to float32, which float32 weights widened give back to the bit.
func TestImportFloat64(t *testing.T) {
	ckpt := exporttest.TrainTiny(t, func(c *config.Config) {})
	dir := filepath.Join(t.TempDir(), "export")
	exportTo(t, ckpt, dir)
	editWeights(t, dir, func(ts []safetensors.Tensor) []safetensors.Tensor {
		for i, x := range ts {
			ts[i] = safetensors.F64(x.Name, x.Shape, x.Float64s())
		}
		return ts
	}, encode(t))
	editConfig(t, dir, func(c map[string]any) { c["dtype"] = "float64" })
	out := filepath.Join(t.TempDir(), "model.ckpt")
	if got := importTo(t, dir, out); !strings.Contains(got, "float64 weights rounded to float32") {
		t.Errorf("stdout %q says nothing of the rounding", got)
	}
	was, _ := training.LoadCheckpoint(ckpt)
	got, err := training.LoadCheckpoint(out)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range was.Model.Params {
		if string(got.Model.Params[i].Value.Raw) != string(p.Value.Raw) {
			t.Fatalf("weight %s differs after the round trip through float64", p.Name)
		}
	}
}
