package position_test

import (
	"fmt"
	"math"

	"extrapolate/position"
)

// linear is a scheme of one's own: a fixed bias of −slope·δ on the key δ positions back, the
// same for every head (ALiBi with one slope).
type linear struct {
	heads int
	slope float64
}

func (linear) Name() string { return "example_linear" }

// Bias implements position.Biaser: a bias by distance, [head][δ].
func (l linear) Bias(n int) (*position.Bias, error) {
	b := position.NewBias(l.heads, n, false)
	for h := 0; h < l.heads; h++ {
		for d := 0; d < n; d++ {
			b.Values[h*n+d] = float64(-d) * l.slope
		}
	}
	return b, nil
}

// A scheme registers a constructor under its name, from its package's init function; a config
// then names it as position.scheme, and every command builds it.
func ExampleRegister() {
	position.Register("example_linear", func(s position.Spec) (position.Scheme, error) {
		return linear{heads: s.Heads, slope: 0.25}, nil
	})
	s, err := position.New(position.Spec{DModel: 8, Heads: 2, Layers: 1, TrainLen: 16, Config: position.Config{Scheme: "example_linear"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	b, err := position.BiasAt(s, nil, 0, 4)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Name(), b.Values[:4])
	// Output: example_linear [0 -0.25 -0.5 -0.75]
}

// A RoPE scaling registers its frequencies under its name: here each frequency divided by the
// factor, position interpolation's rule. A config then names it as position.scaling.type.
func ExampleRegisterScaling() {
	position.RegisterScaling("example_divide", position.ScalingType{
		Doc: "every frequency divided by the factor",
		Frequencies: func(_ any, d int, b float64, _, _ int, s float64) ([]float64, float64) {
			inv := make([]float64, d/2)
			for i := range inv {
				inv[i] = math.Pow(b, -float64(2*i)/float64(d)) / s
			}
			return inv, 1
		},
	})
	c := position.Config{Scheme: "rope", Params: map[string]any{"base": 100}, Scaling: &position.Scaling{Type: "example_divide", Factor: position.Factor{Value: 4}}}
	s, err := position.New(position.Spec{DModel: 8, Heads: 2, Layers: 1, TrainLen: 16, Config: c})
	if err != nil {
		fmt.Println(err)
		return
	}
	rot, err := position.RotationAt(s, 64)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rot.InvFreq)
	// Output: [0.25 0.025]
}
