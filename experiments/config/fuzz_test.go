package config

import (
	"testing"

	"extrapolate/internal/strictyaml"
)

// FuzzConfig feeds arbitrary bytes to the config decoder: it must return a config or an error,
// never panic, and a config it accepts must read back the same from its resolved form.
func FuzzConfig(f *testing.F) {
	f.Add([]byte("name: rope\nposition: {scheme: rope, base: 10000}\ntrain: {steps: 10}\n"))
	f.Add([]byte("name: x\nposition: {scheme: rope, scaling: {type: yarn, factor: auto, beta_fast: 32}}\n"))
	f.Add([]byte("name: x\ntrain: {finetune: {seq_len: 256, steps: 5}}\neval: {lengths: [64, 128], tokens: 1024}\n"))
	f.Add([]byte("name: &a x\nseed: *a\n"))
	f.Add([]byte("- a\n- b\n"))
	f.Add([]byte("name: x\nname: y\n"))
	f.Add([]byte("{{{{"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > maxConfigBytes {
			return
		}
		root, err := strictyaml.Parse("fuzz.yaml", b)
		if err != nil {
			return
		}
		c, err := Decode("fuzz.yaml", root, nil)
		if err != nil {
			return
		}
		out := c.Config().Marshal()
		root2, err := strictyaml.Parse("resolved.yaml", out)
		if err != nil {
			t.Fatalf("resolved config does not parse: %v\n%s", err, out)
		}
		c2, err := Decode("resolved.yaml", root2, nil)
		if err != nil {
			t.Fatalf("resolved config does not load: %v\n%s", err, out)
		}
		if string(c2.Config().Marshal()) != string(out) {
			t.Fatalf("resolved config changed on reload:\n%s\n%s", out, c2.Config().Marshal())
		}
	})
}
