package task

import "extrapolate/internal/rng"

// Addition adds two numbers of size digits each, every number written least significant digit
// first: "43+65=09." is 34+56=90. The addition task of Kazemnejad et al. 2023 ("The Impact of
// Positional Encoding on Length Generalization in Transformers",
// McGill-NLP/length-generalization), in the reversed format of Lee et al. 2023 ("Teaching
// Arithmetic to Small Transformers") and Zhou et al. 2024 ("Transformers Can Achieve Length
// Generalization But Not Robustly"): written so, each digit of the sum follows from the digits
// at its own place and the carry from the one before, which the model has just written, as a
// person adds by hand. Both operands have exactly size digits (the last one written, the most
// significant, is not 0) and the sum has no leading-zero padding, so it is size or size+1 digits
// long and the "." says where it ends. On 1 to 16 digits, tested to 4x.
type Addition struct{}

func init() { Register(Addition{}) }

func (Addition) Name() string { return "addition" }
func (Addition) Source() string {
	return "Kazemnejad et al. 2023, The Impact of Positional Encoding on Length Generalization in Transformers (McGill-NLP/length-generalization): addition; reversed digits as in Lee et al. 2023, Teaching Arithmetic to Small Transformers, and Zhou et al. 2024"
}
func (Addition) Sizes() Sizes { return Sizes{Min: 1, Max: 16, Test: []int{8, 16, 24, 32, 48, 64}} }

// MaxLen is two operands, "+", "=", a sum of size+1 digits and ".".
func (Addition) MaxLen(size int) int { return 3*size + 4 }

func (Addition) Generate(g *rng.SplitMix64, size int) Example {
	a, b := operand(g, size), operand(g, size)
	sum := digitSum(a, b)
	prompt := append(append(append(a, '+'), b...), '=')
	return QA(prompt, append(sum, '.'))
}

// digitSum adds two numbers of as many digits, each written least significant digit first, and
// writes their sum so.
func digitSum(a, b []byte) []byte {
	sum := make([]byte, 0, len(a)+2)
	carry := 0
	for i := range a {
		d := int(a[i]-'0') + int(b[i]-'0') + carry
		sum = append(sum, byte('0'+d%10))
		carry = d / 10
	}
	if carry > 0 {
		sum = append(sum, '1')
	}
	return sum
}

// operand draws a number of exactly n digits, written least significant digit first.
func operand(g *rng.SplitMix64, n int) []byte {
	d := make([]byte, n, 2*n+2) // room for the prompt it starts
	for i := range d {
		d[i] = '0' + byte(uniform(g, 10))
	}
	d[n-1] = '1' + byte(uniform(g, 9))
	return d
}
