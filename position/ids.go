package position

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"extrapolate/internal/rng"
)

// Position ids in training (train.positions). A model sees the tokens of a window of n at
// positions 0, 1, …, n−1, unless its run draws other ids for each training batch, the same for
// every sequence of the batch: a sorted random subset of a longer range (randomized positions),
// or contiguous chunks with skips between them (PoSE). Either way every scheme takes them, since
// the model computes what the scheme adds over the whole range and looks it up at the ids
// (model.Options.PositionRange). Evaluation sees 0, 1, …, n−1, as before, unless the kind draws
// ids at evaluation too (IDsType.AtEvaluation), as randomized positions do: then each window
// is seen at a draw of its own (DrawWindow). A new kind is one file that registers an IDsType in
// its init function:
//
//	func init() { position.RegisterIDs("mine", position.IDsType{...}) }
//
// and a config names it as train.positions.type.

// IDsConfig is the train.positions section: a registered kind of position ids and its own
// fields, which the kind declares and decodes itself, as a scaling type does.
type IDsConfig struct {
	// Type is a registered kind: randomized, pose, ...
	Type string
	// Params holds the kind's own fields by name, such as PoSE's chunks.
	Params map[string]any

	// nodes holds the YAML node each of Params was read from, as Config's.
	nodes map[string]*yaml.Node
}

// UnmarshalYAML reads the section: type, and every other field into Params.
func (c *IDsConfig) UnmarshalYAML(n *yaml.Node) error {
	var out IDsConfig
	if _, err := unmarshalFields(n, "train.positions.", map[string]any{"type": &out.Type}, &out.Params, &out.nodes); err != nil {
		return err
	}
	*c = out
	return nil
}

// MarshalYAML writes the section back: type, then the kind's fields sorted.
func (c IDsConfig) MarshalYAML() (any, error) {
	return marshalFields([]field{{"type", c.Type}}, c.Params)
}

// String names the section as reports do: its type, and the fields given, sorted, as
// randomized(noise_max_length=1024).
func (c IDsConfig) String() string { return withFields(c.Type, c.Params) }

// IDsType is one way of drawing a training batch's position ids, registered by name.
type IDsType struct {
	// Doc says in one line what the kind draws, for help texts.
	Doc string
	// Params returns a pointer to a new struct holding the kind's fields at their defaults,
	// tagged with their yaml names.
	Params func() any
	// RangeField is the field that sets how many positions the ids are drawn from.
	RangeField string
	// Range checks the decoded fields for windows of n tokens, naming a bad one
	// train.positions.NAME, and returns the number of positions the ids are drawn from: every
	// id is below it.
	Range func(params any, n int) (int, error)
	// Draw writes len(dst) ids into dst, increasing strictly and below the range, drawn from g.
	Draw func(params any, g *rng.SplitMix64, dst []int)
	// AtEvaluation says that evaluation places each window's tokens at ids drawn as training
	// draws a batch's, len(dst) of them for a window of any length up to the range, rather than
	// at 0..n−1: what the kind's reference code does when it evaluates. A model trained at such
	// ids has never seen its positions contiguous.
	AtEvaluation bool
}

var idsTypes = registry[IDsType]{kind: "position ids type"}

// RegisterIDs makes a kind of position ids available by name. It panics if the name is taken or
// the kind has no Params, Range or Draw, since either is a programming error.
func RegisterIDs(name string, t IDsType) {
	if t.Params == nil || t.Range == nil || t.Draw == nil {
		panic("position: position ids type " + name + " registered without Params, Range or Draw")
	}
	idsTypes.add(name, t)
}

// IDsTypes lists the registered kinds of position ids, sorted.
func IDsTypes() []string { return idsTypes.names() }

// IDs is a kind of position ids resolved for training windows of a length: its fields decoded
// and checked, and the range they give. Only Resolve makes one.
type IDs struct {
	Type string
	// Range is the number of positions the ids are drawn from: each is below it, so that the
	// model computes what its scheme adds at Range positions.
	Range int
	// RangeField names the field that sets Range, for errors.
	RangeField string

	t      IDsType
	params any
	n      int
}

// Resolve decodes and checks the section for training windows of n tokens. It returns nil for
// none.
func (c *IDsConfig) Resolve(n int) (*IDs, error) {
	if c == nil {
		return nil, nil
	}
	t, ok := idsTypes.lookup(c.Type)
	if !ok {
		return nil, fmt.Errorf("train.positions.type: unknown type %q (known: %s)", c.Type, strings.Join(IDsTypes(), ", "))
	}
	if n <= 0 {
		return nil, fmt.Errorf("train.positions: training length %d", n)
	}
	params := t.Params()
	if err := decodeParams("train.positions.", "the "+c.Type+" kind of position ids", c.Params, c.nodes, params); err != nil {
		return nil, err
	}
	r, err := t.Range(params, n)
	if err != nil {
		return nil, err
	}
	return &IDs{Type: c.Type, Range: r, RangeField: "train.positions." + t.RangeField, t: t, params: params, n: n}, nil
}

// Draw writes the ids of the next batch into dst, one per token of a window, drawn from g.
func (ids *IDs) Draw(g *rng.SplitMix64, dst []int) {
	if len(dst) != ids.n {
		panic(fmt.Sprintf("position: %d ids drawn for windows of %d", len(dst), ids.n))
	}
	ids.t.Draw(ids.params, g, dst)
}

// AtEvaluation reports whether evaluation draws the ids of each window as training draws them
// (IDsType.AtEvaluation); false for nil, which is 0..n−1 throughout.
func (ids *IDs) AtEvaluation() bool { return ids != nil && ids.t.AtEvaluation }

// DrawWindow writes the ids of an evaluation window of len(dst) tokens into dst, drawn from g,
// for a kind drawn at evaluation. It panics for a window longer than the range, which has not
// enough positions (WindowApplicable says so first), or for a kind that is not drawn at
// evaluation.
func (ids *IDs) DrawWindow(g *rng.SplitMix64, dst []int) {
	if !ids.t.AtEvaluation || len(dst) > ids.Range {
		panic(fmt.Sprintf("position: %d ids drawn for an evaluation window by the %s kind, of range %d", len(dst), ids.Type, ids.Range))
	}
	ids.t.Draw(ids.params, g, dst)
}

// WindowApplicable says why an evaluation window of n tokens cannot be drawn at ids, wrapping
// ErrNotApplicable, as a learned table says why a length past it cannot be scored: its range
// has fewer than n positions. nil when it can.
func (ids *IDs) WindowApplicable(n int) error {
	if n <= ids.Range {
		return nil
	}
	return fmt.Errorf("%s positions: a window of %d tokens, but evaluation draws its positions from the %d of %s, as training did: %w",
		ids.Type, n, ids.Range, ids.RangeField, ErrNotApplicable)
}

// randint is Python's random.randint(lo, hi), both ends included, from g: the reference codes
// draw with it (PoSE) or its equivalent.
func randint(g *rng.SplitMix64, lo, hi int) int {
	return lo + int(g.Next()%uint64(hi-lo+1))
}

// maxIDsRange bounds the range ids are drawn from, as position.max_len is bounded.
const maxIDsRange = 1 << 20

// checkRange refuses a range shorter than the windows or beyond the limit, naming field.
func checkRange(field string, r, n int) error {
	switch {
	case r < n:
		return fmt.Errorf("train.positions.%s: %d, want at least the training length %d (the range the ids are drawn from)", field, r, n)
	case r > maxIDsRange:
		return fmt.Errorf("train.positions.%s: %d, above the limit of %d", field, r, maxIDsRange)
	}
	return nil
}
