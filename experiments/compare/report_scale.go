package compare

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"extrapolate/experiments/claims"
	"extrapolate/experiments/measure"
)

// Files of a comparison with a grid, beside its points' folders.
const (
	ScaleCSV  = "claims_by_point.csv"
	ScaleJSON = "claims_by_point.json"
)

// scaleFigure is the file name of a claim's figure of its deciding ratio by scale.
func scaleFigure(id, ext string) string { return "scale_" + id + "." + ext }

// PointReport is one grid point of a comparison: its settings and size, and its report.
type PointReport struct {
	Name string   `json:"name"`
	Set  []string `json:"set"`
	// Params is the number of weights of its models; TrainTokens the tokens each trains on.
	Params      int             `json:"params"`
	TrainTokens int             `json:"train_tokens"`
	Report      *Report         `json:"-"`
	Claims      []claims.Result `json:"claims"`
	// Failed lists the point's runs that failed, with why: their numbers are in no mean.
	Failed []FailedRun `json:"failed_runs,omitempty"`
}

// FailedRun is a run of a grid point that failed (training diverged), and its error.
type FailedRun struct {
	Run   string `json:"run"`
	Error string `json:"error"`
}

// buildGridReport reads and checks every grid point's runs and makes each point's report, then
// the claims judged at every point, writing nothing: nil, with what is missing said, when runs
// lack results.
func (r *Runner) buildGridReport() (*Report, error) {
	missing, total, err := r.MissingRuns()
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		r.say("%d of %d runs have results; missing: %s. Run the report again when every shard has finished.\n",
			total-len(missing), total, strings.Join(missing, ", "))
		return nil, nil
	}
	c := r.Plan.Comparison
	top := newReport(c, r.Command)
	for i, p := range c.Grid {
		at, err := r.Plan.atPoint(i)
		if err != nil {
			return nil, err
		}
		sub := *r
		sub.Plan, sub.Dir = at, filepath.Join(r.Dir, p.Name)
		rep, err := sub.buildReport()
		if err != nil {
			return nil, fmt.Errorf("grid point %s: %w", p.Name, err)
		}
		set, _ := setList(p.Set) // AtPoint decoded it already
		first, train := rep.Runs[0], rep.Runs[0].Config().Train
		top.Points = append(top.Points, &PointReport{
			Name: p.Name, Set: set, Params: first.Result.Params,
			TrainTokens: train.Steps * train.BatchSize * train.SeqLen,
			Report:      rep, Claims: rep.Claims, Failed: failedRuns(rep),
		})
	}
	top.TrainLen, top.Lengths = top.Points[0].Report.TrainLen, top.Points[0].Report.Lengths
	if top.sections, err = gridSections(top.Points); err != nil {
		return nil, err
	}
	return top, nil
}

// failedRuns lists a report's runs that failed, in the comparison's order.
func failedRuns(rep *Report) []FailedRun {
	var out []FailedRun
	for _, r := range rep.Runs {
		if !r.Result.OK() {
			out = append(out, FailedRun{Run: r.Config().Name, Error: r.Result.Error})
		}
	}
	return out
}

// gridClaims lists the claims that some point could judge (not "not applicable" at every
// point: a claim about a scheme the comparison does not run), in the order of the registry.
func (rep *Report) gridClaims() []claims.Result {
	var out []claims.Result
	for _, id := range claims.IDs() {
		for _, p := range rep.Points {
			if r, ok := p.claimAt(id); ok && r.Verdict != claims.NotApplicable {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// claimAt is the claim id's result at a point.
func (p *PointReport) claimAt(id string) (claims.Result, bool) {
	i := slices.IndexFunc(p.Claims, func(c claims.Result) bool { return c.ID == id })
	if i < 0 {
		return claims.Result{}, false
	}
	return p.Claims[i], true
}

// writeGrid writes each point's report in its folder, then the grid's own files: a table of
// verdicts and deciding ratios, and a figure per claim of its ratio against the model's weights
// and against the training tokens.
func (rep *Report) writeGrid(dir string) error {
	for _, pt := range rep.Points {
		if err := pt.Report.write(filepath.Join(dir, pt.Name)); err != nil {
			return fmt.Errorf("grid point %s: %w", pt.Name, err)
		}
	}
	if err := measure.WriteFile(filepath.Join(dir, ScaleCSV), rep.gridCSV()); err != nil {
		return err
	}
	if err := measure.WriteJSON(filepath.Join(dir, ScaleJSON), struct {
		Command   string         `json:"command"`
		Generated time.Time      `json:"generated"`
		Points    []*PointReport `json:"points"`
	}{rep.Command, rep.Generated, rep.Points}); err != nil {
		return err
	}
	for _, cl := range rep.gridClaims() {
		if err := rep.writeScaleFigure(dir, cl.ID); err != nil {
			return err
		}
	}
	if rep.lengthsVary() {
		if err := rep.writeLength(dir); err != nil {
			return err
		}
	}
	for _, s := range rep.sections {
		if err := s.Write(dir); err != nil {
			return err
		}
	}
	return measure.WriteFile(filepath.Join(dir, ReportFile), rep.gridMarkdown())
}

// gridCSV has a row per claim, point and seed ("mean" for the ratio of the means).
func (rep *Report) gridCSV() []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"claim", "point", "params", "train_tokens", "verdict", "what", "limit", "at_least", "seed", "ratio"})
	for _, cl := range rep.gridClaims() {
		for _, p := range rep.Points {
			r, ok := p.claimAt(cl.ID)
			if !ok {
				continue
			}
			writeDeciding(w, []string{cl.ID, p.Name, strconv.Itoa(p.Params), strconv.Itoa(p.TrainTokens), string(r.Verdict)}, r.Deciding)
		}
	}
	w.Flush()
	return b.Bytes()
}

// writeDeciding writes a claim's rows at a point: the point's columns, then the deciding ratio's
// what, limit, at_least, seed and ratio, a row for the ratio of the means ("mean") and one per
// seed; a single row with those columns empty when nothing decided the claim.
func writeDeciding(w *csv.Writer, point []string, d *claims.Deciding) {
	row := append(point, "", "", "", "", "")
	k := len(point)
	if d == nil {
		w.Write(row)
		return
	}
	row[k], row[k+1], row[k+2] = d.What, strconv.FormatFloat(d.Limit, 'g', -1, 64), strconv.FormatBool(d.AtLeast)
	row[k+3], row[k+4] = "mean", strconv.FormatFloat(d.Ratio, 'g', 6, 64)
	w.Write(row)
	for i, x := range d.SeedRatios {
		row[k+3], row[k+4] = strconv.FormatUint(d.Seeds[i], 10), strconv.FormatFloat(x, 'g', 6, 64)
		w.Write(row)
	}
}

// verdictCell is a claim's verdict and deciding ratio at a point, for the table.
func verdictCell(r claims.Result) string {
	mark, ok := map[claims.Verdict]string{claims.Reproduced: "✓", claims.NotReproduced: "✗", claims.NotApplicable: "n/a"}[r.Verdict]
	if !ok {
		mark = string(r.Verdict)
	}
	d := r.Deciding
	if d == nil {
		return mark
	}
	cell := fmt.Sprintf("%s %.2f", mark, d.Ratio)
	if len(d.SeedRatios) > 1 {
		cell += fmt.Sprintf(" (%.2f–%.2f)", slices.Min(d.SeedRatios), slices.Max(d.SeedRatios))
	}
	return cell
}

// gridMarkdown is a grid's REPORT.md: its points, the verdicts by point, the deciding ratios'
// figures, perplexity by point and the rules.
func (rep *Report) gridMarkdown() []byte {
	var b bytes.Buffer
	rep.gridIntro(&b)
	rep.gridVerdicts(&b)
	if rep.lengthsVary() {
		rep.lengthVerdicts(&b)
	}
	b.WriteString("\n## Deciding ratios against size and budget\n\nEach figure: the claim's deciding ratio at each point against the model's weights (left) and the tokens it trained on (right), the bars spanning the seeds, the dashed line the rule's limit.\n")
	for _, cl := range rep.gridClaims() {
		if rep.hasRatios(cl.ID) {
			fmt.Fprintf(&b, "\n![%s](%s)\n", cl.ID, scaleFigure(cl.ID, "png"))
		}
	}
	rep.gridPerplexity(&b)
	for _, s := range rep.sections {
		s.Markdown(&b)
	}
	b.WriteString("\n## Rules\n\n")
	for _, cl := range rep.gridClaims() {
		fmt.Fprintf(&b, "- **%s**: %s. %s\n", cl.ID, cl.Statement, cl.Rule)
	}
	return b.Bytes()
}

// gridIntro writes the title, what produced the grid and on which CPUs, and the points' table.
func (rep *Report) gridIntro(b *bytes.Buffer) {
	var compute float64
	var runs []measure.RunResult
	for _, pt := range rep.Points {
		compute += pt.Report.computeSeconds()
		runs = append(runs, pt.Report.Runs...)
	}
	fmt.Fprintf(b, "# Claims by scale: %s\n\n", rep.Comparison.Name)
	fmt.Fprintf(b, "Produced by `%s` on %s. The same runs, %s, at each of %d points; every claim is judged at every point by the rule and threshold of the single comparison (below). Training and evaluation took %.0f s of computation in all, on %s.\n\n",
		rep.Command, rep.Generated.Format("2006-01-02"), rep.trainedAt(), len(rep.Points), compute, processors(runs))
	b.WriteString("## Points\n\n| point | settings | weights | training tokens | report |\n|---|---|---:|---:|---|\n")
	for _, pt := range rep.Points {
		fmt.Fprintf(b, "| %s | %s | %d | %d | [%s](%s/%s) |\n", pt.Name, orDash(pt.Set), pt.Params, pt.TrainTokens, pt.Name, pt.Name, ReportFile)
	}
}

// trainedAt says at which length the grid's runs train and at which they are scored: one
// length for all, or each point's own and the multiples of it.
func (rep *Report) trainedAt() string {
	if !rep.lengthsVary() {
		return fmt.Sprintf("trained at %d tokens and scored at %d to %d", rep.TrainLen, rep.Lengths[0], rep.Lengths[len(rep.Lengths)-1])
	}
	var lens []string
	for _, n := range rep.trainLens() {
		lens = append(lens, strconv.Itoa(n))
	}
	first := rep.Points[0].Report
	last := len(lens) - 1
	return fmt.Sprintf("trained at %s and %s tokens (each point at its own) and scored at %s to %s its training length",
		strings.Join(lens[:last], ", "), lens[last], measure.Ratio(first.Lengths[0], first.TrainLen), measure.Ratio(first.Lengths[len(first.Lengths)-1], first.TrainLen))
}

// gridVerdicts writes the table of each claim's verdict and deciding ratio by point.
func (rep *Report) gridVerdicts(b *bytes.Buffer) {
	b.WriteString("\n## Verdicts by scale\n\nEach cell: ✓ reproduced, ✗ not reproduced (or undecided, where a number it needs is not finite), then the deciding ratio (of the means over seeds) and its range over seeds; the rule's limit is in the second column.\n\n| claim | limit |")
	for _, pt := range rep.Points {
		fmt.Fprintf(b, " %s |", pt.Name)
	}
	fmt.Fprintf(b, "\n|---|---|%s\n", strings.Repeat("---|", len(rep.Points)))
	for _, cl := range rep.gridClaims() {
		fmt.Fprintf(b, "| %s | %s |", cl.ID, rep.gridLimit(cl.ID))
		for _, pt := range rep.Points {
			r, ok := pt.claimAt(cl.ID)
			if !ok {
				b.WriteString(" – |")
				continue
			}
			fmt.Fprintf(b, " %s |", verdictCell(r))
		}
		b.WriteString("\n")
	}
	if !rep.anyFailed() {
		return
	}
	b.WriteString("| runs | |")
	for _, pt := range rep.Points {
		fmt.Fprintf(b, " %s |", strings.ReplaceAll(pt.runsCell(), "|", `\|`))
	}
	b.WriteString("\n\nRuns: a point's runs that failed, with why; their numbers are in no mean, and a claim that needs a series none of whose runs is left is undecided.\n")
}

// anyFailed reports whether a run failed at some point.
func (rep *Report) anyFailed() bool {
	for _, pt := range rep.Points {
		if len(pt.Failed) > 0 {
			return true
		}
	}
	return false
}

// runsCell says how many of a point's runs are ok, or which failed and why.
func (p *PointReport) runsCell() string {
	runs := len(p.Report.Runs)
	if len(p.Failed) == 0 {
		return fmt.Sprintf("✓ %d of %d ok", runs, runs)
	}
	var why []string
	for _, f := range p.Failed {
		why = append(why, f.Run+": "+f.Error)
	}
	return fmt.Sprintf("✗ %d of %d failed (%s)", len(p.Failed), runs, strings.Join(why, "; "))
}

// gridLimit is a claim's rule limit as the verdict table shows it ("≤ 0.85"), from the last
// point that has a deciding ratio, or "" if none has.
func (rep *Report) gridLimit(id string) string {
	limit := ""
	for _, pt := range rep.Points {
		if r, ok := pt.claimAt(id); ok && r.Deciding != nil {
			op := "≤"
			if r.Deciding.AtLeast {
				op = "≥"
			}
			limit = fmt.Sprintf("%s %g", op, r.Deciding.Limit)
		}
	}
	return limit
}

// gridPerplexity writes each series' mean perplexity at 1x and 16x at every point.
func (rep *Report) gridPerplexity(b *bytes.Buffer) {
	b.WriteString("\n## Perplexity at 1x and 16x by point (mean over seeds)\n\n| run |")
	mults := []int{1, 16}
	for _, pt := range rep.Points {
		for _, m := range mults {
			fmt.Fprintf(b, " %s %dx |", pt.Name, m)
		}
	}
	fmt.Fprintf(b, "\n|---|%s\n", strings.Repeat("---:|", len(rep.Points)*len(mults)))
	for _, s := range rep.Points[0].Report.Series {
		fmt.Fprintf(b, "| %s |", s.Label)
		for _, pt := range rep.Points {
			i := slices.IndexFunc(pt.Report.Series, func(x *measure.Series) bool { return x.Label == s.Label })
			for _, m := range mults {
				st, ok := measure.Stat{}, false
				if i >= 0 {
					st, ok = pt.Report.Series[i].At(m * pt.Report.TrainLen)
				}
				switch {
				case !ok:
					b.WriteString(" – |")
				case st.Seeds > 0:
					// The seeds left out, non-finite or failed, are said: the mean is of the others.
					fmt.Fprintf(b, " %.2f%s |", st.PPLMean, measure.LeftOut(st))
				default:
					fmt.Fprintf(b, " %s |", measure.Missing(st))
				}
			}
		}
		b.WriteString("\n")
	}
}

// hasRatios reports whether some point has a deciding ratio for the claim.
func (rep *Report) hasRatios(id string) bool {
	for _, pt := range rep.Points {
		if r, ok := pt.claimAt(id); ok && r.Deciding != nil {
			return true
		}
	}
	return false
}

// orDash joins a point's settings, or says there are none.
func orDash(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
