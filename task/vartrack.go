package task

import "extrapolate/internal/rng"

// VarTrack is RULER's variable tracking (Hsieh et al. 2024, "RULER: What's the Real Context
// Size of Your Long-Context Language Models?", NVIDIA/RULER, vt): chains of assignments in the
// noise filler, "VAR X1 = 12345" then "VAR X2 = X1" and so on, each chain's statements in order
// but the chains' interleaved; the question gives the value a chain starts with and asks which
// variables hold it, the answer their names in the order they are assigned. Compact as the
// needles (see filler.go), a statement is "a=123. " or "b=a. " and the question "?123=":
//
//	c=378. f=556. The sky is blue. o=c. b=o. v=f. x=v. The sun is y?556=fvx.
//
// RULER's default is one chain of four hops, whose answer is then every variable named; to fit a
// window of 64 and still ask for tracking, here two chains, one asked and one a distractor, of
// two hops each, with distinct values and names. The size is the example's length in bytes;
// from the shortest, with no filler, to 56, tested to 4x.
type VarTrack struct{}

func init() { Register(VarTrack{}) }

func (VarTrack) Name() string { return "vartrack" }
func (VarTrack) Source() string {
	return "Hsieh et al. 2024, RULER: What's the Real Context Size of Your Long-Context Language Models? (NVIDIA/RULER): variable tracking"
}

const (
	varTrackChains = 2
	varTrackHops   = 2
	// varTrackMin is an example with no filler: the chains, the question and the answer.
	varTrackMin = varTrackChains*(needleLen+varTrackHops*len("b=a. ")) +
		len("?123=") + varTrackHops + 1 + len(".")
)

func (VarTrack) Sizes() Sizes {
	return Sizes{Min: varTrackMin, Max: 56, Test: []int{56, 112, 168, 224}}
}

// MaxLen is the size: every example is exactly that long.
func (VarTrack) MaxLen(size int) int { return size }

func (VarTrack) Generate(g *rng.SplitMix64, size int) Example {
	names := distinct(g, lower, varTrackChains*(varTrackHops+1))
	vs := distinctMagic(g, varTrackChains)
	chains := make([][][]byte, varTrackChains)
	for c := range chains {
		vars := names[c*(varTrackHops+1) : (c+1)*(varTrackHops+1)]
		chains[c] = append(chains[c], needle(vars[0], vs[c]))
		for i := 1; i < len(vars); i++ {
			chains[c] = append(chains[c], needle(vars[i], vars[i-1:i]))
		}
	}
	asked := names[:varTrackHops+1]
	question := append(append([]byte{'?'}, vs[0]...), '=')
	return needleExample(g, size, question, asked, chains...)
}
