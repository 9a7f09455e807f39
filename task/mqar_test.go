package task

import (
	"fmt"
	"strings"
	"testing"
)

func TestMQAR(t *testing.T) {
	sameOrder := 0 // examples at the largest size asking the keys in the order of the pairs
	keys, values := map[byte]bool{}, map[byte]bool{}
	checkBuiltin(t, "mqar", func(size int, e Example) error {
		if len(e.Text) != 4*size+1 || e.Text[2*size] != '=' || e.Answer[2*size] {
			return fmt.Errorf("%q, want %d pairs, = and as many queries", e.Text, size)
		}
		value := map[byte]byte{}
		var pairKeys, queryKeys []byte
		for i := 0; i < len(e.Text); i += 2 {
			if i == 2*size {
				i++ // the =
			}
			k, v := e.Text[i], e.Text[i+1]
			if !strings.ContainsRune(letters, rune(k)) || v < '0' || v > '9' {
				return fmt.Errorf("pair %q at %d, want a letter and a digit", e.Text[i:i+2], i)
			}
			query := i > 2*size
			if e.Answer[i] || e.Answer[i+1] != query {
				return fmt.Errorf("answer marks %v at %d, want only the queries' values", e.Answer[i:i+2], i)
			}
			want, seen := value[k]
			switch {
			case !query && seen:
				return fmt.Errorf("key %c twice in the pairs", k)
			case !query:
				value[k] = v
				keys[k], values[v] = true, true
				pairKeys = append(pairKeys, k)
			case !seen || strings.IndexByte(string(queryKeys), k) >= 0:
				return fmt.Errorf("query %c is no key or asked twice", k)
			case v != want:
				return fmt.Errorf("query %c answered %c, want %c", k, v, want)
			default:
				queryKeys = append(queryKeys, k)
			}
		}
		if size == 52 && string(pairKeys) == string(queryKeys) {
			sameOrder++
		}
		return nil
	})
	if len(keys) != len(letters) || len(values) != 10 {
		t.Errorf("%d keys and %d values seen, want every letter and digit", len(keys), len(values))
	}
	if sameOrder > 0 {
		t.Errorf("%d examples of 52 pairs ask the keys in their order", sameOrder)
	}
}
