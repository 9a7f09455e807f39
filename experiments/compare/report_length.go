package compare

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"extrapolate/experiments/claims"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/plot"
)

// LengthCSV is the file of a grid whose points differ in training length: each claim's verdict
// along the axis, beside the grid's own files.
const LengthCSV = "claims_by_length.csv"

// lengthFigure is the file name of a claim's figure of its deciding ratio by training length.
func lengthFigure(id, ext string) string { return "length_" + id + "." + ext }

// lengthsVary reports whether the grid's points train at different lengths.
func (rep *Report) lengthsVary() bool { return len(rep.trainLens()) > 1 }

// trainLens are the training lengths of the grid's points, ascending, once each.
func (rep *Report) trainLens() []int {
	var out []int
	for _, pt := range rep.Points {
		out = append(out, pt.Report.TrainLen)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// A lengthLine is the grid's points that differ only in training length: one width, at one
// budget of training tokens, in order of training length.
type lengthLine struct {
	Name   string
	Width  int
	Points []*PointReport
}

// lengthLines groups the grid's points by width and training tokens, in the order of their first
// point; a budget above the grid's smallest is named by its multiple of it ("d64, 4x tokens").
func (rep *Report) lengthLines() []lengthLine {
	least := slices.MinFunc(rep.Points, func(a, b *PointReport) int { return a.TrainTokens - b.TrainTokens }).TrainTokens
	var out []lengthLine
	for _, pt := range rep.Points {
		width := pt.Report.Runs[0].Config().Model.DModel
		name := fmt.Sprintf("d%d", width)
		if pt.TrainTokens != least {
			name += fmt.Sprintf(", %sx tokens", strconv.FormatFloat(float64(pt.TrainTokens)/float64(least), 'g', 3, 64))
		}
		i := slices.IndexFunc(out, func(l lengthLine) bool { return l.Name == name })
		if i < 0 {
			out = append(out, lengthLine{Name: name, Width: width})
			i = len(out) - 1
		}
		out[i].Points = append(out[i].Points, pt)
	}
	for _, l := range out {
		slices.SortStableFunc(l.Points, func(a, b *PointReport) int { return a.Report.TrainLen - b.Report.TrainLen })
	}
	return out
}

// at is the line's point at training length n, or nil.
func (l lengthLine) at(n int) *PointReport {
	i := slices.IndexFunc(l.Points, func(pt *PointReport) bool { return pt.Report.TrainLen == n })
	if i < 0 {
		return nil
	}
	return l.Points[i]
}

// holdsAt lists the training lengths at which the line's points reproduce the claim.
func (l lengthLine) holdsAt(id string) []int {
	var out []int
	for _, pt := range l.Points {
		if r, ok := pt.claimAt(id); ok && r.Verdict == claims.Reproduced {
			out = append(out, pt.Report.TrainLen)
		}
	}
	return out
}

// lengthVerdicts writes the table of each claim's verdict by training length, a row per claim
// and line of points, and the figures' links.
func (rep *Report) lengthVerdicts(b *bytes.Buffer) {
	lens := rep.trainLens()
	b.WriteString("\n## Verdicts by training length\n\nEach row: a claim along one line of points (a width, at a budget of training tokens), each cell its verdict and deciding ratio at that training length as in the table above, every point scored at multiples of its own training length; the last column lists the training lengths at which the claim holds.\n\n| claim | limit | points |")
	for _, n := range lens {
		fmt.Fprintf(b, " trained at %d |", n)
	}
	fmt.Fprintf(b, " holds at |\n|---|---|---|%s---|\n", strings.Repeat("---|", len(lens)))
	lines := rep.lengthLines()
	for _, cl := range rep.gridClaims() {
		for _, l := range lines {
			fmt.Fprintf(b, "| %s | %s | %s |", cl.ID, rep.gridLimit(cl.ID), l.Name)
			for _, n := range lens {
				r, ok := claims.Result{}, false
				if pt := l.at(n); pt != nil {
					r, ok = pt.claimAt(cl.ID)
				}
				if !ok {
					b.WriteString(" – |")
					continue
				}
				fmt.Fprintf(b, " %s |", verdictCell(r))
			}
			fmt.Fprintf(b, " %s |\n", joinLengths(l.holdsAt(cl.ID)))
		}
	}
	b.WriteString("\nEach figure: the claim's deciding ratio against the training length, a line per width and budget, the bars spanning the seeds, the dashed line the rule's limit and the shaded side of it the one that passes.\n")
	for _, cl := range rep.gridClaims() {
		if rep.hasRatios(cl.ID) {
			fmt.Fprintf(b, "\n![%s](%s)\n", cl.ID, lengthFigure(cl.ID, "png"))
		}
	}
}

// joinLengths lists training lengths, or says there are none.
func joinLengths(lens []int) string {
	if len(lens) == 0 {
		return "none"
	}
	s := make([]string, len(lens))
	for i, n := range lens {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// lengthCSV has a row per claim, point and seed ("mean" for the ratio of the means), with the
// point's width and training length.
func (rep *Report) lengthCSV() []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"claim", "line", "point", "d_model", "train_len", "train_tokens", "verdict", "what", "limit", "at_least", "seed", "ratio"})
	for _, cl := range rep.gridClaims() {
		for _, l := range rep.lengthLines() {
			for _, pt := range l.Points {
				r, ok := pt.claimAt(cl.ID)
				if !ok {
					continue
				}
				writeDeciding(w, []string{cl.ID, l.Name, pt.Name, strconv.Itoa(l.Width), strconv.Itoa(pt.Report.TrainLen), strconv.Itoa(pt.TrainTokens), string(r.Verdict)}, r.Deciding)
			}
		}
	}
	w.Flush()
	return b.Bytes()
}

// writeLength writes the files of a grid whose points differ in training length: the verdicts
// along the axis as CSV and a figure per claim.
func (rep *Report) writeLength(dir string) error {
	if err := measure.WriteFile(filepath.Join(dir, LengthCSV), rep.lengthCSV()); err != nil {
		return err
	}
	for _, cl := range rep.gridClaims() {
		if err := rep.writeLengthFigure(dir, cl.ID); err != nil {
			return err
		}
	}
	return nil
}

// writeLengthFigure draws the claim's deciding ratio against the training length, a line per
// width and budget. Where the ratio nearest to failing is another at another point (4x at one,
// 16x at the next), each point says which.
func (rep *Report) writeLengthFigure(dir, id string) error {
	var lines []plot.LengthLine
	var limit float64
	var atLeast bool
	whats := map[string]bool{}
	for _, l := range rep.lengthLines() {
		line := plot.LengthLine{Name: l.Name}
		for _, pt := range l.Points {
			if q, d, ok := pt.scalePoint(id); ok {
				line.Points = append(line.Points, q)
				limit, atLeast, whats[d.What] = d.Limit, d.AtLeast, true
			}
		}
		lines = append(lines, line)
	}
	what := "the deciding ratio of each point"
	for _, l := range lines {
		for i := range l.Points {
			if len(whats) == 1 {
				what, l.Points[i].Name = l.Points[i].What, ""
			} else {
				l.Points[i].Name = l.Points[i].What
			}
		}
	}
	title := fmt.Sprintf("%s: %s by training length (limit %g, dashed)", id, what, limit)
	return plot.ByLength(filepath.Join(dir, lengthFigure(id, "png")), filepath.Join(dir, lengthFigure(id, "svg")), title, lines, limit, atLeast)
}
