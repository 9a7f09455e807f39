package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"extrapolate/experiments/config"
)

// TestEvalRefusesHugeSizes gives -lengths, -tokens and -examples the extreme values of an int:
// each is refused before anything is computed from it, in one line naming the flag and the
// limit, exit 2, nothing written. -lengths named eval.batch_tokens, which the user did not give.
func TestEvalRefusesHugeSizes(t *testing.T) {
	ckpt := train(t, "rope")
	tasks := trainCopy(t)
	maxLen := fmt.Sprintf("above the limit of %d, the longest length eval takes", config.MaxEvalLength)
	maxTokens := fmt.Sprintf("above the limit of %d", config.MaxEvalTokens)
	big, half := fmt.Sprint(math.MaxInt64), fmt.Sprint(math.MaxInt64/2)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-checkpoint", ckpt, "-lengths", big}, "-lengths: " + big + ", " + maxLen},
		{[]string{"-checkpoint", ckpt, "-lengths", half}, "-lengths: " + half + ", " + maxLen},
		{[]string{"-checkpoint", ckpt, "-lengths", "16," + big}, "-lengths: " + big + ", " + maxLen},
		{[]string{"-checkpoint", ckpt, "-lengths", "16,99999999999999999999"}, "-lengths: 99999999999999999999, " + maxLen},
		{[]string{"-checkpoint", ckpt, "-lengths", fmt.Sprint(2 * config.MaxEvalLength), "-tokens", fmt.Sprint(2 * config.MaxEvalLength)}, "-lengths: 2097152, " + maxLen},
		{[]string{"-checkpoint", ckpt, "-lengths", fmt.Sprint(math.MinInt64)}, "-lengths: -9223372036854775808, want positive lengths"},
		{[]string{"-checkpoint", ckpt, "-lengths", "-99999999999999999999"}, "-lengths: -99999999999999999999, want positive lengths"},
		{[]string{"-checkpoint", ckpt, "-lengths", big, "-tokens", big}, "-lengths: " + big + ", " + maxLen},
		{[]string{"-checkpoint", ckpt, "-tokens", big}, "-tokens: " + big + ", " + maxTokens},
		{[]string{"-checkpoint", ckpt, "-tokens", half}, "-tokens: " + half + ", " + maxTokens},
		{[]string{"-checkpoint", ckpt, "-tokens", fmt.Sprint(math.MinInt64)}, "-tokens: -9223372036854775808, want a positive number"},
		{[]string{"-checkpoint", tasks, "-examples", big}, "-examples: " + big + ", want between 1 and"},
		{[]string{"-checkpoint", tasks, "-examples", half}, "-examples: " + half + ", want between 1 and"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		code, stdout, stderr := runEval(t, append(c.args, "-out", out)...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || !strings.HasPrefix(msg, "eval: "+c.want) || strings.Contains(msg, "\n") || stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and one line %q", c.args, code, stdout, msg, "eval: "+c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: wrote %s", c.args, out)
		}
	}
}
