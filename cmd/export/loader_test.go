package main

import (
	"crypto/sha256"
	le "encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"extrapolate/experiments/config"
	"extrapolate/internal/cmdtest"
	"extrapolate/internal/exporttest"
	"extrapolate/position"
)

// TestLoaderBadInput gives pytorch/load.py exports whose checksum matches but whose content is
// wrong, and flags out of range: each must be one line on stderr naming the file or the flag,
// with exit status 2, where they used to end in a Python traceback (exit 1) or, for --factor
// 0.5, in scores.
func TestLoaderBadInput(t *testing.T) {
	exporttest.NeedTorch(t)
	good := filepath.Join(t.TempDir(), "export")
	if code, _, stderr := cmdtest.Run(t, binary, "", "-checkpoint", exporttest.TrainTiny(t, scheme("nope", nil)), "-out", good); code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	header := func(edit func(h map[string]any) any) func(dir string) {
		return func(dir string) { editHeader(t, dir, edit) }
	}
	firstTensor := func(h map[string]any) map[string]any {
		for name, e := range h {
			if name != "__metadata__" {
				return e.(map[string]any)
			}
		}
		t.Fatal("no tensor in the header")
		return nil
	}
	for _, c := range []struct {
		name  string
		edit  func(dir string)
		flags []string
		want  string
	}{
		{name: "config.json a list", edit: func(dir string) { writeConfig(t, dir, `[1, 2]`) }, want: "config.json: a JSON list"},
		{name: "config.json not JSON", edit: func(dir string) { writeConfig(t, dir, `{"format": `) }, want: "config.json: not JSON"},
		{name: "header a list", edit: header(func(map[string]any) any { return []int{1} }), want: "model.safetensors: the header is a JSON list"},
		{name: "header empty", edit: func(dir string) { writeWeights(t, dir, make([]byte, 8)) }, want: "model.safetensors: the header is not JSON"},
		{name: "negative dimension", edit: header(func(h map[string]any) any { firstTensor(h)["shape"] = []int{-1, 4}; return h }), want: "shape [-1, 4]"},
		{name: "shape a string", edit: header(func(h map[string]any) any { firstTensor(h)["shape"] = "16"; return h }), want: "shape '16'"},
		{name: "dtype a list", edit: header(func(h map[string]any) any { firstTensor(h)["dtype"] = []string{"F32"}; return h }), want: "dtype ['F32']"},
		{name: "data_offsets null", edit: header(func(h map[string]any) any { firstTensor(h)["data_offsets"] = nil; return h }), want: "data_offsets None"},
		{name: "--threads 0", flags: []string{"--threads", "0"}, want: "--threads 0"},
		{name: "--lengths abc", flags: []string{"--lengths", "abc"}, want: "--lengths abc"},
		{name: "--factor 0.5", flags: []string{"--scaling", "yarn", "--factor", "0.5"}, want: "--factor 0.5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "export")
			if err := os.CopyFS(dir, os.DirFS(good)); err != nil {
				t.Fatal(err)
			}
			if c.edit != nil {
				c.edit(dir)
			}
			cmd := exec.Command(exporttest.Python, append([]string{loader, dir}, c.flags...)...)
			out, err := cmd.CombinedOutput()
			msg := strings.TrimSpace(string(out))
			exit, _ := err.(*exec.ExitError)
			if exit == nil || exit.ExitCode() != 2 || strings.Contains(msg, "\n") || !strings.Contains(msg, c.want) {
				t.Errorf("exit %v, output %q; want exit 2 and one line containing %q", err, msg, c.want)
			}
		})
	}
}

// editHeader rewrites the safetensors header of the export in dir as edit returns it, and the
// checksum config.json gives the file, so that only the header is wrong.
func editHeader(t *testing.T, dir string, edit func(h map[string]any) any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	n := le.LittleEndian.Uint64(b[:8])
	var h map[string]any
	if err := json.Unmarshal(b[8:8+n], &h); err != nil {
		t.Fatal(err)
	}
	hb, err := json.Marshal(edit(h))
	if err != nil {
		t.Fatal(err)
	}
	out := le.LittleEndian.AppendUint64(nil, uint64(len(hb)))
	writeWeights(t, dir, append(append(out, hb...), b[8+n:]...))
}

// writeWeights replaces the export's weights file by b, and its checksum in config.json.
func writeWeights(t *testing.T, dir string, b []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "model.safetensors"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	cb, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(cb, &c); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	c["weights_sha256"] = hex.EncodeToString(sum[:])
	cb, err = json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	writeConfig(t, dir, string(cb))
}

func writeConfig(t *testing.T, dir, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLoaderRefusesDistanceMap: an export of a run scored through a distance map records the map
// (position.distance_map), and the loader, which applies none, refuses it in one line (exit 2)
// instead of scoring the model without it.
func TestLoaderRefusesDistanceMap(t *testing.T) {
	exporttest.NeedTorch(t)
	dir := filepath.Join(t.TempDir(), "export")
	ckpt := exporttest.TrainTiny(t, func(c *config.Config) {
		c.Position = position.Config{Scheme: "rope", DistanceMap: &position.DistanceMapConfig{Type: "rerope", Params: map[string]any{"window": 4}}}
	})
	if code, _, stderr := cmdtest.Run(t, binary, "", "-checkpoint", ckpt, "-out", dir); code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Position struct {
			DistanceMap struct {
				Type   string         `json:"type"`
				Params map[string]any `json:"params"`
			} `json:"distance_map"`
		} `json:"position"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if m := c.Position.DistanceMap; m.Type != "rerope" || m.Params["window"] != 4.0 {
		t.Errorf("config.json's position.distance_map: %+v, want rerope with window 4", m)
	}
	out, err := exec.Command(exporttest.Python, loader, dir).CombinedOutput()
	msg := strings.TrimSpace(string(out))
	exit, _ := err.(*exec.ExitError)
	if exit == nil || exit.ExitCode() != 2 || strings.Contains(msg, "\n") || !strings.Contains(msg, "distance map 'rerope'") {
		t.Errorf("exit %v, output %q; want exit 2 and one line naming the distance map", err, msg)
	}
}
