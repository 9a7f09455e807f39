package task

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

func TestCounting(t *testing.T) {
	answers := map[int]bool{}
	passes, statements := 0, 0 // at size 96
	checkBuiltin(t, "counting", func(size int, e Example) error {
		prompt, answer, err := splitQA(e)
		if err != nil {
			return err
		}
		program, asked, ok := strings.Cut(string(prompt), "?")
		if !ok || len(asked) != 2 || asked[1] != '=' {
			return fmt.Errorf("prompt %q, want a program and ?x=", prompt)
		}
		value := map[byte]int{} // the variables set, and what they hold
		n := 0
		for p := program; p != ""; n++ {
			if p[0] == '_' {
				p = p[1:]
				if size == 96 {
					passes++
				}
				continue
			}
			if len(p) < 2 || p[0] < 'a' || p[0] > 'c' {
				return fmt.Errorf("statement %d: %q", n, p)
			}
			v, held := value[p[0]]
			switch p[1] {
			case '0':
				value[p[0]] = 0
			case '+':
				if !held || v == 10 {
					return fmt.Errorf("statement %d increments %c, holding %d (set %v), past 10 or unset", n, p[0], v, held)
				}
				value[p[0]] = v + 1
			default:
				return fmt.Errorf("statement %d: %q", n, p)
			}
			p = p[2:]
		}
		if n != size {
			return fmt.Errorf("%d statements, want %d", n, size)
		}
		if size == 96 {
			statements += n
		}
		v, held := value[asked[0]]
		if !held {
			return fmt.Errorf("asks %c, which is never set", asked[0])
		}
		answers[v] = true
		return wantAnswer(answer, strconv.Itoa(v)+".")
	})
	for v := range 11 {
		if !answers[v] {
			t.Errorf("no answer %d", v)
		}
	}
	// Passes weigh 8 in 16; before any variable is set increments are drawn again, which
	// makes passes more frequent.
	if r := float64(passes) / float64(statements); r < 0.45 || r > 0.6 {
		t.Errorf("passes are %.3f of the statements at size 96, want about 0.5", r)
	}
}
