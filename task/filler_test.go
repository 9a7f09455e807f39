package task

import (
	"fmt"
	"regexp"
	"strings"
)

// The needle tasks' tests parse an example back into its filler, its statements and its
// question, and compute the answer from those.

// rulerNoise is RULER's noise, written out again so that the tests check the filler against
// the paper, not against the constant the tasks use.
const rulerNoise = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again."

// statementRE is a needle, "k=123. ", or an assignment, "b=a. ".
var statementRE = regexp.MustCompile(`([a-z])=([0-9]{3}|[a-z])\. `)

// questionRE is the question: keys or a value, then "=".
var questionRE = regexp.MustCompile(`^\?([a-z]+|[0-9]{3})=$`)

// A statement is a needle or an assignment, found in an example's text.
type statement struct {
	key, value string
	at         int // its offset in the text
}

// parseNeedles splits a needle example of size bytes into its statements and question, checking
// that it is size bytes long, that its answer follows its question, and that taken out of it,
// the statements leave RULER's noise, repeated from one of its sentences and cut, each
// statement having stood at the start of one of its sentences.
func parseNeedles(size int, e Example) (stmts []statement, question string, answer []byte, err error) {
	if len(e.Text) != size {
		return nil, "", nil, fmt.Errorf("%d bytes, want %d", len(e.Text), size)
	}
	prompt, answer, err := splitQA(e)
	if err != nil {
		return nil, "", nil, err
	}
	q := strings.LastIndexByte(string(prompt), '?')
	if q < 0 || !questionRE.Match(prompt[q:]) {
		return nil, "", nil, fmt.Errorf("prompt %q has no question", prompt)
	}
	question = questionRE.FindStringSubmatch(string(prompt[q:]))[1]
	context := string(prompt[:q])
	var filler strings.Builder
	prev := 0
	for _, m := range statementRE.FindAllStringSubmatchIndex(context, -1) {
		filler.WriteString(context[prev:m[0]])
		if f := filler.String(); f != "" && !strings.HasSuffix(f, ". ") {
			return nil, "", nil, fmt.Errorf("statement at %d is inside a sentence", m[0])
		}
		stmts = append(stmts, statement{key: context[m[2]:m[3]], value: context[m[4]:m[5]], at: m[0]})
		prev = m[1]
	}
	filler.WriteString(context[prev:])
	f := filler.String()
	noise := strings.Repeat(rulerNoise+" ", len(f)/len(rulerNoise)+2)
	for _, first := range []string{"The grass", "The sky", "The sun", "Here", "There"} {
		if strings.HasPrefix(noise[strings.Index(noise, first):], f) {
			return stmts, question, answer, nil
		}
	}
	return nil, "", nil, fmt.Errorf("filler %q is not RULER's noise from one of its sentences", f)
}
