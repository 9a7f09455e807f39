package task

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"extrapolate/internal/rng"
)

// TestMQAR reads every example back as Zoology lays it out: n pairs of a distinct lowercase key
// and a distinct uppercase value, then 14n letters in which each key stands once at an even
// offset, followed by its value, the only answer bytes, hidden.
func TestMQAR(t *testing.T) {
	spread := 0 // examples at 16 pairs whose queries are not in the pairs' order
	checkBuiltin(t, "mqar", func(size int, e Example) error {
		if len(e.Text) != 16*size || !e.Hide {
			return fmt.Errorf("%d bytes, hidden %v; want %d, hidden", len(e.Text), e.Hide, 16*size)
		}
		value := map[byte]byte{}
		var keys []byte
		for i := 0; i < 2*size; i += 2 {
			k, v := e.Text[i], e.Text[i+1]
			if !strings.ContainsRune(lower, rune(k)) || !strings.ContainsRune(upper, rune(v)) || e.Answer[i] || e.Answer[i+1] {
				return fmt.Errorf("pair %q at %d, want a lowercase key and an uppercase value, no answer", e.Text[i:i+2], i)
			}
			if _, ok := value[k]; ok {
				return fmt.Errorf("key %c twice in the pairs", k)
			}
			for _, w := range value {
				if w == v {
					return fmt.Errorf("value %c twice in the pairs", v)
				}
			}
			value[k] = v
			keys = append(keys, k)
		}
		var asked []byte
		for i := 2 * size; i < len(e.Text); i++ {
			if !strings.ContainsRune(letters, rune(e.Text[i])) {
				return fmt.Errorf("byte %q at %d, want a letter", e.Text[i], i)
			}
			if !e.Answer[i] {
				continue
			}
			k := e.Text[i-1]
			switch {
			case (i-2*size)%2 != 1:
				return fmt.Errorf("an answer at %d, an even offset after the pairs", i)
			case e.Text[i] != value[k]:
				return fmt.Errorf("query %c at %d answered %c, want %c", k, i-1, e.Text[i], value[k])
			case strings.IndexByte(string(asked), k) >= 0:
				return fmt.Errorf("key %c asked twice", k)
			}
			asked = append(asked, k)
		}
		if len(asked) != size {
			return fmt.Errorf("%d queries, want %d", len(asked), size)
		}
		if size == 16 && string(asked) != string(keys) {
			spread++
		}
		return nil
	})
	if spread == 0 {
		t.Error("every example of 16 pairs asks its keys in the pairs' order")
	}
}

// TestMQARPowerLaw checks where the first key is asked against Zoology's law, computed here
// from its formula: slot k−1 of the 7n after n pairs with probability ∝ a·k^(a−1), a = 0.01.
func TestMQARPowerLaw(t *testing.T) {
	const size, draws = 4, 40000
	space := 7 * size
	p := make([]float64, space)
	total := 0.0
	for k := range p {
		p[k] = 0.01 * math.Pow(float64(k+1), 0.01-1)
		total += p[k]
	}
	count := make([]float64, space)
	g := rng.SplitMix64{State: 0x90fe}
	for range draws {
		e := MQAR{}.Generate(&g, size)
		for slot := range space {
			if at := 2*size + 2*slot; e.Answer[at+1] && e.Text[at] == e.Text[0] {
				count[slot]++
				break
			}
		}
	}
	chi2 := 0.0
	for k := range p {
		want := draws * p[k] / total
		chi2 += (count[k] - want) * (count[k] - want) / want
	}
	// 27 degrees of freedom: the 99.9th percentile of χ² is 55.5.
	if chi2 > 55.5 {
		t.Errorf("χ² %.1f over %d slots, above 55.5; counts %v", chi2, space, count)
	}
}
