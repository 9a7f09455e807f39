package task

import (
	"fmt"
	"math"
	"testing"

	"extrapolate/internal/rng"
)

func TestFlipFlop(t *testing.T) {
	checkBuiltin(t, "flipflop", func(size int, e Example) error {
		if len(e.Text) != 2*size {
			return fmt.Errorf("%d bytes, want %d instructions", len(e.Text), size)
		}
		var written byte // the last write's bit, computed from the writes alone
		for i := 0; i < len(e.Text); i += 2 {
			op, bit := e.Text[i], e.Text[i+1]
			switch {
			case bit != '0' && bit != '1':
				return fmt.Errorf("instruction %d: bit %q", i/2, bit)
			case i == 0 && op != 'w', i == len(e.Text)-2 && op != 'r':
				return fmt.Errorf("instruction %d is %q: the first must write and the last read", i/2, op)
			case e.Answer[i] || e.Answer[i+1] != (op == 'r'):
				return fmt.Errorf("instruction %d (%q): answer marks %v, want only a read's bit", i/2, op, e.Answer[i:i+2])
			}
			switch op {
			case 'w':
				written = bit
			case 'r':
				if bit != written {
					return fmt.Errorf("instruction %d reads %q, the last write was %q", i/2, bit, written)
				}
			case 'i':
			default:
				return fmt.Errorf("instruction %d: op %q", i/2, op)
			}
		}
		return nil
	})
}

// TestFlipFlopRates checks that the instructions between the first and the last are FFL(0.8)'s:
// ignore 0.8, write and read 0.1 each.
func TestFlipFlopRates(t *testing.T) {
	g := rng.SplitMix64{State: 1}
	count := map[byte]float64{}
	n := 0.0
	for range 2000 {
		e := FlipFlop{}.Generate(&g, 112)
		for i := 2; i < len(e.Text)-2; i += 2 {
			count[e.Text[i]]++
			n++
		}
	}
	for op, want := range map[byte]float64{'i': 0.8, 'w': 0.1, 'r': 0.1} {
		// Far beyond 5 standard errors (below 0.002 here) is a wrong rate, not chance.
		if got := count[op] / n; math.Abs(got-want) > 0.01 {
			t.Errorf("rate of %q %.4f, want %.1f", op, got, want)
		}
	}
}
