package plot

// A Family is a group of position schemes that a comparison's figures draw in a panel of their
// own: nineteen lines in one panel cannot be told apart, four to eight can.
type Family int

const (
	Absolute    Family = iota // positions added to the input: nope, learned, sinusoidal
	RoPE                      // rotations, with any scaling or fine-tuning
	Bias                      // biases added to the attention scores
	Temperature               // an attention temperature, or schemes mixed by layer
	Content                   // positions read from the content: forget gates, counts, sticks
	Other                     // a scheme registered outside this repository
	NumFamilies
)

// Title is the family's panel's title.
func (f Family) Title() string {
	return [...]string{
		Absolute:    "absolute positions",
		RoPE:        "RoPE and its scalings",
		Bias:        "attention biases",
		Temperature: "temperatures and mixes",
		Content:     "positions from the content",
		Other:       "other schemes",
	}[f]
}
