package config

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestPositionIDsConfigErrors checks that a train.positions section that cannot run is one line
// naming its field, and that the settings it applies to load: any scheme, with a learned table
// as long as the range.
func TestPositionIDsConfigErrors(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"train.positions={type: shuffled}"}, "train.positions.type: unknown type \"shuffled\" (known: pose, randomized)"},
		{[]string{"train.positions={noise_max_length: 256}"}, "train.positions.type: unknown type \"\""},
		{[]string{"train.positions={type: randomized}"}, "train.positions.noise_max_length: not given"},
		{[]string{"train.positions={type: randomized, noise_max_length: 32}"}, "train.positions.noise_max_length: 32, want at least the training length 64"},
		{[]string{"train.positions={type: randomized, max_len: 256}"}, "train.positions.max_len: the randomized kind of position ids does not take max_len"},
		{[]string{"train.positions={type: pose, target_len: 256}"}, "train.positions.target_len: the pose kind of position ids does not take target_len"},
		{[]string{"train.positions={type: pose, scaled_max_position_embeddings: 256, chunks: 0}"}, "train.positions.chunks: 0, want 1 to the training length 64"},
		{[]string{"train.positions={type: pose, scaled_max_position_embeddings: 256.5}"}, "train.positions.scaled_max_position_embeddings: 256.5, want a whole number"},
		{[]string{"train.positions=[randomized]"}, "train.positions: want a section of fields"},
		{[]string{"train.positions={type: randomized, noise_max_length: 256}", "position={scheme: learned}"},
			"train.positions.noise_max_length: 256: the learned scheme cannot take positions up to 255: learned positions: 256 positions, but the table has 64 rows: not applicable"},
		{[]string{"train.positions={type: pose, scaled_max_position_embeddings: 100000}", "position={scheme: xpos, scale_base: 64}"},
			"train.positions.scaled_max_position_embeddings: 100000: the xpos scheme cannot take positions up to 99999: position.scale_base"},
		{[]string{"train.positions={type: randomized, noise_max_length: 256}", "position.distance_map={type: rerope, window: 16}"},
			"position.distance_map: rerope places tokens at 0..n−1, but evaluation of train.positions.type randomized draws each window's positions"},
	} {
		_, err := Load(filepath.Join("..", "..", "configs", "rope.yaml"), c.sets)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want one line with %q", c.sets, err, c.want)
		}
	}
	for _, sets := range [][]string{
		{"train.positions={type: randomized, noise_max_length: 1024}"},
		{"train.positions={type: pose, scaled_max_position_embeddings: 256}"},
		{"train.positions={type: pose, scaled_max_position_embeddings: 256, chunks: 3}"},
		{"train.positions={type: randomized, noise_max_length: 256}", "position={scheme: learned, max_len: 256}"},
		{"train.positions={type: randomized, noise_max_length: 256}", "position={scheme: fire}"},
		{"train.positions={type: randomized, noise_max_length: 256}", "position={layers: [rope, alibi, t5, nope]}", "model.layers=4"},
		{"train.positions={type: pose, scaled_max_position_embeddings: 256}", "train.drope={fraction: 0.125}"},
		{"train.positions={type: pose, scaled_max_position_embeddings: 256}", "position.scaling={type: yarn, factor: 4}", "train.finetune={seq_len: 256, steps: 10}"},
		{"train.positions={type: randomized, noise_max_length: 256}", "attention.scale=ssmax"},
		{"train.positions={type: pose, scaled_max_position_embeddings: 256}", "position.distance_map={type: rerope, window: 16}"},
	} {
		if _, err := Load(filepath.Join("..", "..", "configs", "rope.yaml"), sets); err != nil {
			t.Errorf("%v: %v", sets, err)
		}
	}
}

// TestPositionIDsResolved checks that the resolved config carries the ids of the main phase,
// that a config without train.positions carries none and marshals as it did before it, and
// that the section reads back from the marshalled config.
func TestPositionIDsResolved(t *testing.T) {
	path := filepath.Join("..", "..", "configs", "rope.yaml")
	r, err := LoadResolved(path, []string{"train.positions={type: pose, scaled_max_position_embeddings: 256}"})
	if err != nil {
		t.Fatal(err)
	}
	if ids := r.PositionIDs(); ids == nil || ids.Type != "pose" || ids.Range != 256 {
		t.Fatalf("ids %+v, want pose over 256", ids)
	}
	if !strings.Contains(string(r.Config().Marshal()), "    positions:\n        type: pose\n        scaled_max_position_embeddings: 256\n") {
		t.Errorf("the section does not marshal as given:\n%s", r.Config().Marshal())
	}
	plain, err := LoadResolved(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if plain.PositionIDs() != nil || strings.Contains(string(plain.Config().Marshal()), "positions") {
		t.Errorf("a config without train.positions: ids %v, marshalled\n%s", plain.PositionIDs(), plain.Config().Marshal())
	}
	// The estimate holds what the scheme adds over the whole range: more than without.
	fire := []string{"position={scheme: fire}"}
	without, err := LoadResolved(path, fire)
	if err != nil {
		t.Fatal(err)
	}
	with, err := LoadResolved(path, append(fire, "train.positions={type: randomized, noise_max_length: 1024}"))
	if err != nil {
		t.Fatal(err)
	}
	if with.Memory().Train <= without.Memory().Train {
		t.Errorf("training memory %d with ids over 1024, %d without", with.Memory().Train, without.Memory().Train)
	}
}
