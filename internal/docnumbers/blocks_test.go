package docnumbers

import (
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A kind writes a generated block from the reports: args are the words after its name in the
// block's opening comment, page the file the block is in (links are made relative to it).
type kind func(page string, args []string) (string, error)

// kinds are the blocks a page may hold.
var kinds = map[string]kind{
	"verdicts":          verdicts,
	"claims":            claimsTable,
	"claims-list":       claimsList,
	"ppl":               pplTable,
	"scale-ppl":         scalePPL,
	"attention":         attentionTable,
	"passkey":           passkeyTable,
	"committed":         committed,
	"task-runs":         taskRuns,
	"by-length":         byLength,
	"effective":         effectiveTable,
	"passkey-effective": passkeyEffectiveTable,
}

// short names a claim in the verdict tables; a claim not listed is named by its statement.
var short = map[string]string{
	"learned_not_applicable":      "learned positions are not applicable past their table",
	"rerope_flat":                 "ReRoPE and leaky ReRoPE stay flat: at 16x over 1x",
	"lm_infinite_flat":            "LM-Infinite stays flat: at 16x over 1x",
	"dual_chunk_flat":             "Dual Chunk Attention stays flat: at 16x over 1x",
	"passkey_dual_chunk":          "Dual Chunk Attention retrieves at 4x where plain RoPE does not",
	"breakpoint_follows_critical": "RoPE breaks within a factor 2 of T_extra, the limit its critical dimension predicts",
	"small_base_extrapolates":     "a base whose every pair turns within training extrapolates better than 10⁴: over 10⁴ at 16x",
	"base_bound_superficial":      "below Men et al.'s bound on the base, perplexity holds while retrieval fails at 1x",
	"streaming_needs_sinks":       "StreamingLLM needs its sinks: without them over with them, at 16x",
	"prope_better":                "p-RoPE is no worse at 1x and better past it: over plain RoPE",
	"pose_matches_finetune":       "PoSE comes close to fine-tuning at 4x: over the fine-tuned run",
	"sinusoidal_degrades":         "sinusoidal falls apart: perplexity at 4x over 1x",
	"alibi_flat":                  "ALiBi stays flat: at 4x and 16x over 1x",
	"scaling_rescues_rope":        "scalings (NTK-aware, dynamic NTK, YaRN, Llama 3) rescue RoPE: over plain RoPE at 4x and 8x",
	"t5_extrapolates":             "T5's bias extrapolates better than sinusoidal and RoPE: over theirs at 4x and 16x",
	"kerple_matches_alibi":        "KERPLE is no worse than ALiBi: over ALiBi at 16x",
	"fire_matches_alibi_kerple":   "FIRE is no worse than ALiBi and KERPLE: over theirs at 16x",
	"logn_helps":                  "log-n scaling at inference only (Qwen) helps NoPE and RoPE: over theirs without it at 16x",
	"logn_train_helps":            "log-length scaled attention in training (Chiang & Cholak) does the same",
	"mix_extrapolates":            "a RoPE/NoPE mix extrapolates better than all-RoPE: over RoPE at 16x",
	"swan_layout_flat":            "SWAN-GPT's layout (window-RoPE and NoPE layers) stays flat, without its scaling: at 16x over 1x",
	"rope_relative":               "RoPE's score depends only on distance",
	"fox_beats_rope":              "FoX extrapolates better than RoPE: over RoPE at 4x and 16x",
	"stickbreaking_flat":          "stick-breaking stays flat: at 8x over 1x",
	"gate_removes_sink":           "a gate on the attention output removes the sink",
	"gated_extrapolates":          "gated attention extrapolates better: over the ungated scheme at 4x and 16x",
	"softpick_no_sink":            "softpick has no sink: a sink rate of 0%",
	"passkey_rope":                "plain RoPE retrieves at 1x and collapses past it",
	"passkey_scaling_extends":     "PI and YaRN, each with its fine-tune, retrieve at the length they extend to",
	"passkey_alibi_local":         "ALiBi's flat perplexity does not come with retrieval at 8x to 16x",
	"passkey_self_extend":         "Self-Extend retrieves at 4x where plain RoPE does not",
	"tasks_solvable":              "every task is learned at its training sizes",
	"tasks_rope_copy_fails":       "plain RoPE copies at its training sizes and not at twice them",
	"tasks_flipflop_degrades":     "RoPE learns flip-flop and loses it past its training sizes",
	"tasks_needle_rope_fails":     "RoPE finds a needle at its training length, not at 4x",
	"tasks_counting_fails":        "RoPE and ALiBi fail at counting past their training sizes",
	"tasks_nope_ranking":          "NoPE and T5 generalise better than RoPE and absolute positions",
	"tasks_cope_counts":           "CoPE counts and keeps flip-flop at twice its training sizes",
	"tasks_hard_alibi_copies":     "Hard-ALiBi copies strings at twice its training sizes",
	"tasks_self_extend_needle":    "Self-Extend finds a needle at 4x where plain RoPE does not",
	"tasks_rerope_needle":         "ReRoPE finds a needle at 4x where plain RoPE does not",
	"tasks_randomized_helps":      "randomized position ids raise RoPE's exact match at 2x",
	"tasks_drope_needles":         "DroPE beats RoPE and NoPE on needles at 2x",
}

// link is the path from page to a report's REPORT.md.
func link(page, report string) string {
	rel, err := filepath.Rel(filepath.Dir(page), filepath.Join(root, "results", filepath.FromSlash(report), "REPORT.md"))
	if err != nil {
		return "results/" + report + "/REPORT.md"
	}
	return filepath.ToSlash(rel)
}

func symbol(verdict string) string {
	switch verdict {
	case "reproduced":
		return "✓"
	case "not reproduced":
		return "✗"
	case "not applicable":
		return "–"
	case "undecided":
		return "?"
	}
	return "? " + verdict
}

func limitText(c *claim) string {
	if c == nil || c.Deciding == nil {
		return ""
	}
	if c.Deciding.AtLeast {
		return fmt.Sprintf("≥ %g", c.Deciding.Limit)
	}
	return fmt.Sprintf("≤ %g", c.Deciding.Limit)
}

// weights writes a weight count as the docs do: 133k, 859k, 3.29M.
func weights(n int) string {
	if n >= 1e6 {
		return fmt.Sprintf("%.3gM", float64(n)/1e6)
	}
	return fmt.Sprintf("%.0fk", float64(n)/1e3)
}

// options splits a block's words into report names and key=value options.
func options(args []string) (names []string, opt map[string]string) {
	opt = map[string]string{}
	for _, a := range args {
		if k, v, ok := strings.Cut(a, "="); ok {
			opt[k] = v
		} else if a == "evidence" {
			opt[a] = "yes"
		} else {
			names = append(names, a)
		}
	}
	return names, opt
}

// selected reports whether option only (ids, or prefixes ending in *) admits a claim.
func selected(only, id string) bool {
	if only == "" {
		return true
	}
	for _, o := range strings.Split(only, ",") {
		if p, ok := strings.CutSuffix(o, "*"); ok && strings.HasPrefix(id, p) || o == id {
			return true
		}
	}
	return false
}

type column struct {
	head string
	cmp  *comparison
}

// verdicts is a table of every claim's verdict and deciding ratio in each report named, a
// column per comparison or grid point: `verdicts compare compare_large scale`, with options
// only=ID,PREFIX* and evidence (a column of the first report's evidence).
func verdicts(page string, args []string) (string, error) {
	names, opt := options(args)
	var cols []column
	for _, n := range names {
		r, err := load(n)
		if err != nil {
			return "", err
		}
		switch r := r.(type) {
		case *comparison:
			head := fmt.Sprintf("[%s](%s)<br>%s weights", n, link(page, n), weights(r.params()))
			if !r.tasks() {
				head += fmt.Sprintf(", trained at %d tokens", r.TrainLen)
			}
			cols = append(cols, column{head, r})
		case *grid:
			for _, p := range r.Points {
				cols = append(cols, column{fmt.Sprintf("[%s %s](%s)<br>%s weights, %s training tokens, at %d", n, p.Name, link(page, n+"/"+p.Name), weights(p.Params), tokens(p.TrainTokens), p.cmp.TrainLen), p.cmp})
			}
		}
	}
	var holds *grid
	if name := opt["holds"]; name != "" {
		r, err := load(name)
		if err != nil {
			return "", err
		}
		g, ok := r.(*grid)
		if !ok {
			return "", fmt.Errorf("verdicts: holds=%s is not a grid", name)
		}
		holds = g
	}
	var ids []string
	for _, c := range cols {
		for _, cl := range c.cmp.Claims {
			if !slices.Contains(ids, cl.ID) && selected(opt["only"], cl.ID) {
				ids = append(ids, cl.ID)
			}
		}
	}
	type row struct {
		name, limit, evidence string
		cells                 []string
	}
	var rows []row
	limits, ratios, na, undecided := false, false, false, false
	for _, id := range ids {
		var r row
		judged := false
		for _, c := range cols {
			cl, err := c.cmp.claim(id)
			if err != nil {
				r.cells = append(r.cells, "")
				continue
			}
			if r.name == "" {
				r.name = cl.Statement
				if s, ok := short[id]; ok {
					r.name = s
				}
			}
			if r.limit == "" {
				r.limit = limitText(cl)
			}
			if r.evidence == "" {
				r.evidence = cl.Evidence
			}
			judged = judged || cl.Verdict != "not applicable"
			na = na || cl.Verdict == "not applicable"
			undecided = undecided || cl.Verdict == "undecided"
			cell := symbol(cl.Verdict)
			if cl.Deciding != nil {
				cell += fmt.Sprintf(" %.2f", cl.Deciding.Ratio)
				ratios = true
			}
			r.cells = append(r.cells, cell)
		}
		if holds != nil {
			r.cells = append(r.cells, holds.holdsAt(id))
		}
		if judged {
			limits = limits || r.limit != ""
			rows = append(rows, r)
		}
	}
	var b strings.Builder
	b.WriteString("| claim |")
	if limits {
		b.WriteString(" limit |")
	}
	for _, c := range cols {
		b.WriteString(" " + c.head + " |")
	}
	if holds != nil {
		fmt.Fprintf(&b, " [%s](%s)<br>holds when trained at |", opt["holds"], link(page, opt["holds"]))
	}
	if opt["evidence"] != "" {
		b.WriteString(" the numbers |")
	}
	b.WriteString("\n|---|")
	if limits {
		b.WriteString("---|")
	}
	b.WriteString(strings.Repeat("---|", len(cols)))
	if holds != nil {
		b.WriteString("---|")
	}
	if opt["evidence"] != "" {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s |", r.name)
		if limits {
			fmt.Fprintf(&b, " %s |", r.limit)
		}
		fmt.Fprintf(&b, " %s |", strings.Join(r.cells, " | "))
		if opt["evidence"] != "" {
			fmt.Fprintf(&b, " %s |", r.evidence)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n✓ reproduced, ✗ not reproduced")
	if na {
		b.WriteString(", – not applicable")
	}
	if undecided {
		b.WriteString(", ? undecided (the models lack what the claim needs, or fewer seeds have results than its rule needs; the report says which)")
	}
	if ratios {
		b.WriteString("; the number is the deciding ratio: of the ratios a claim's rule bounds, the one nearest its limit, of the means over seeds")
	}
	b.WriteString(".\n")
	return b.String(), nil
}

// pointLength matches the training length in a grid point's name: d64-L256-4x is the line
// d64-4x at 256 tokens.
var pointLength = regexp.MustCompile(`-L[0-9]+`)

// holdsAt says, for each line of the grid's points that differ only in training length (named
// as a point without its -L part), the training lengths at which the claim is reproduced: "d64:
// 64, 256; d128: none"; "–" where it is judged at no point.
func (g *grid) holdsAt(id string) string {
	var lines []string
	at := map[string][]string{}
	judged := false
	for _, p := range g.Points {
		line := pointLength.ReplaceAllString(p.Name, "")
		if _, ok := at[line]; !ok {
			lines = append(lines, line)
			at[line] = []string{}
		}
		cl, err := p.cmp.claim(id)
		if err != nil || cl.Verdict == "not applicable" {
			continue
		}
		judged = true
		if cl.Verdict == "reproduced" {
			at[line] = append(at[line], strconv.Itoa(p.cmp.TrainLen))
		}
	}
	if !judged {
		return "–"
	}
	cells := make([]string, len(lines))
	for i, l := range lines {
		lens := strings.Join(at[l], ", ")
		if lens == "" {
			lens = "none"
		}
		cells[i] = l + ": " + lens
	}
	return strings.Join(cells, "; ")
}

// byLength is a grid's verdicts along the training length: a row per claim and line of points
// (the points that differ only in training length), a column per training length with the
// verdict and deciding ratio there: `by-length scale_length`.
func byLength(page string, args []string) (string, error) {
	if len(args) != 1 {
		return "", fmt.Errorf("by-length: want one grid, have %q", args)
	}
	r, err := load(args[0])
	if err != nil {
		return "", err
	}
	g, ok := r.(*grid)
	if !ok {
		return "", fmt.Errorf("by-length: %s is not a grid", args[0])
	}
	var lines []string
	var lens []int
	at := map[string]map[int]*comparison{}
	for _, p := range g.Points {
		line := pointLength.ReplaceAllString(p.Name, "")
		if at[line] == nil {
			lines = append(lines, line)
			at[line] = map[int]*comparison{}
		}
		at[line][p.cmp.TrainLen] = p.cmp
		if !slices.Contains(lens, p.cmp.TrainLen) {
			lens = append(lens, p.cmp.TrainLen)
		}
	}
	slices.Sort(lens)
	var b strings.Builder
	b.WriteString("| claim | limit | points |")
	for _, n := range lens {
		fmt.Fprintf(&b, " trained at %d |", n)
	}
	b.WriteString("\n|---|---|---|" + strings.Repeat("---|", len(lens)) + "\n")
	for _, cl := range g.Points[0].cmp.Claims {
		if cl.Verdict == "not applicable" {
			continue
		}
		name := cl.Statement
		if s, ok := short[cl.ID]; ok {
			name = s
		}
		for _, line := range lines {
			fmt.Fprintf(&b, "| %s | %s | %s |", name, limitText(&cl), line)
			for _, n := range lens {
				c := at[line][n]
				if c == nil {
					b.WriteString(" |")
					continue
				}
				x, err := c.claim(cl.ID)
				if err != nil {
					return "", err
				}
				cell := symbol(x.Verdict)
				if x.Deciding != nil {
					cell += fmt.Sprintf(" %.2f", x.Deciding.Ratio)
				}
				b.WriteString(" " + cell + " |")
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\n✓ reproduced, ✗ not reproduced, – not applicable; the number is the deciding ratio, of the means over seeds; an empty cell is a training length the line has no point at.\n")
	return b.String(), nil
}

func tokens(n int) string {
	return fmt.Sprintf("%.2gM", float64(n)/1e6)
}

// claimsTable is one report's claims, numbered as the report numbers them: verdict and deciding
// ratio with its range over seeds, or the evidence for a claim without one. Claims not
// applicable there are left out.
func claimsTable(page string, args []string) (string, error) {
	names, opt := options(args)
	if len(names) != 1 {
		return "", fmt.Errorf("claims: want one report, have %q", names)
	}
	c, err := loadComparison(names[0])
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("| # | claim | verdict | the numbers that decide it | limit |\n|---:|---|---|---|---|\n")
	for i, cl := range c.Claims {
		if cl.Verdict == "not applicable" || !selected(opt["only"], cl.ID) {
			continue
		}
		numbers := cl.Evidence
		if d := cl.Deciding; d != nil {
			numbers = fmt.Sprintf("%s: %.2f", d.What, d.Ratio)
			if len(d.SeedRatios) > 1 {
				numbers += fmt.Sprintf(" (%.2f–%.2f over seeds)", slices.Min(d.SeedRatios), slices.Max(d.SeedRatios))
			}
		}
		fmt.Fprintf(&b, "| %d | `%s`: %s | %s | %s | %s |\n", i+1, cl.ID, cl.Statement, cl.Verdict, numbers, limitText(&cl))
	}
	return b.String(), nil
}

// claimsList is the numbered list of a report's claims with their rules: a report that judges
// every claim numbers them as every report does.
func claimsList(_ string, args []string) (string, error) {
	names, opt := options(args)
	if len(names) != 1 {
		return "", fmt.Errorf("claims-list: want one report, have %q", names)
	}
	c, err := loadComparison(names[0])
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i, cl := range c.Claims {
		if selected(opt["only"], cl.ID) {
			fmt.Fprintf(&b, "%d. `%s`: %s. Rule: %s\n", i+1, cl.ID, cl.Statement, cl.Rule)
		}
	}
	return b.String(), nil
}

func lengthHead(c *comparison, n int) string {
	return fmt.Sprintf("%d (%gx)", n, float64(n)/float64(c.TrainLen))
}

// pplTable is a report's perplexity table, mean ± standard deviation over seeds.
func pplTable(_ string, args []string) (string, error) {
	if len(args) != 1 {
		return "", fmt.Errorf("ppl: want one report, have %q", args)
	}
	c, err := loadComparison(args[0])
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("| run | position |")
	for _, n := range c.Lengths {
		b.WriteString(" " + lengthHead(c, n) + " |")
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---:|", len(c.Lengths)) + "\n")
	for _, s := range c.Series {
		fmt.Fprintf(&b, "| %s | %s |", s.Label, s.Position)
		for _, st := range s.Stats {
			b.WriteString(" " + pplCell(st) + " |")
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}

func pplCell(st stat) string {
	switch {
	case st.NotApplicable != "":
		return "n/a"
	case st.Seeds == 0:
		return "failed"
	}
	return fmt.Sprintf("%.2f ± %.2f", st.Mean, st.Std)
}

// scalePPL is a grid's perplexity at two lengths, given as ratios, by point: `scale-ppl scale 1 16`.
func scalePPL(_ string, args []string) (string, error) {
	if len(args) != 3 {
		return "", fmt.Errorf("scale-ppl: want a grid and two ratios, have %q", args)
	}
	r, err := load(args[0])
	if err != nil {
		return "", err
	}
	g, ok := r.(*grid)
	if !ok {
		return "", fmt.Errorf("scale-ppl: %s is not a grid", args[0])
	}
	var at [2]float64
	for i := range at {
		if at[i], err = strconv.ParseFloat(args[1+i], 64); err != nil {
			return "", fmt.Errorf("scale-ppl: ratio %q: %v", args[1+i], err)
		}
	}
	var b strings.Builder
	b.WriteString("| run |")
	for _, p := range g.Points {
		fmt.Fprintf(&b, " %s: %gx → %gx |", p.Name, at[0], at[1])
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(g.Points)) + "\n")
	if len(g.Points) == 0 {
		return b.String(), nil
	}
	for _, s := range g.Points[0].cmp.Series {
		fmt.Fprintf(&b, "| %s |", s.Label)
		for _, p := range g.Points {
			var cells [2]string
			for i, x := range at {
				st, err := p.cmp.stat(s.Label, int(x*float64(p.cmp.TrainLen)))
				if err != nil {
					return "", err
				}
				cells[i] = pplCell(st)
				if st.NotApplicable == "" && st.Seeds > 0 {
					cells[i] = fmt.Sprintf("%.2f", st.Mean)
				}
			}
			fmt.Fprintf(&b, " %s → %s |", cells[0], cells[1])
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}

// attentionTable is a report's attention in the window's last octave of queries at its longest
// length, with each run's perplexity there.
func attentionTable(_ string, args []string) (string, error) {
	if len(args) != 1 {
		return "", fmt.Errorf("attention: want one report, have %q", args)
	}
	c, err := loadComparison(args[0])
	if err != nil {
		return "", err
	}
	n := c.Lengths[len(c.Lengths)-1]
	var b strings.Builder
	fmt.Fprintf(&b, "| run at %s | entropy (nats) | share on keys at least %d back | perplexity |\n|---|---:|---:|---:|\n", lengthHead(c, n), c.TrainLen)
	uniform := math.NaN()
	for _, s := range c.Series {
		e, u, far, err := c.lastOctave(s.Label, n)
		if err != nil {
			continue // not scored there
		}
		uniform = u
		st, err := c.stat(s.Label, n)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "| %s | %.1f | %.0f%% | %s |\n", s.Label, e, 100*far, pplCell(st))
	}
	fmt.Fprintf(&b, "| uniform attention | %.1f | | |\n", uniform)
	return b.String(), nil
}

// passkeyTable is a report's passkey accuracy by length, mean ± standard deviation over seeds.
func passkeyTable(_ string, args []string) (string, error) {
	if len(args) != 1 {
		return "", fmt.Errorf("passkey: want one report, have %q", args)
	}
	c, err := loadComparison(args[0])
	if err != nil {
		return "", err
	}
	if c.passkey == nil {
		return "", fmt.Errorf("%s has no passkey_by_run.json", c.Name)
	}
	var b strings.Builder
	b.WriteString("| accuracy (all five digits), mean ± std over seeds |")
	for _, n := range c.Lengths {
		b.WriteString(" " + lengthHead(c, n) + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(c.Lengths)) + "\n")
	for _, s := range c.passkey.Series {
		fmt.Fprintf(&b, "| %s |", s.Label)
		for _, l := range s.ByLength {
			cell := fmt.Sprintf("%.1f%% ± %.1f", 100*l.Mean, 100*l.Std)
			if l.Mean == 0 && l.Std == 0 {
				cell = "0%"
			}
			b.WriteString(" " + cell + " |")
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}

// committed is a table of the committed reports: runs, seeds, weights, lengths, and the
// computation they took.
func committed(page string, args []string) (string, error) {
	var b strings.Builder
	b.WriteString("| report | runs | seeds | weights | trained at | scored at | claims judged | computation | processor |\n|---|---:|---|---|---:|---|---:|---:|---|\n")
	for _, n := range args {
		cs, err := comparisons(n)
		if err != nil {
			return "", err
		}
		runs, secs, judged := 0, 0.0, map[string]bool{}
		var ws []string
		var cpus []string
		for _, c := range cs {
			runs += len(c.Runs)
			secs += c.seconds()
			if w := weights(c.params()); !slices.Contains(ws, w) {
				ws = append(ws, w)
			}
			if !slices.Contains(cpus, c.cpus()) {
				cpus = append(cpus, c.cpus())
			}
			for _, cl := range c.Claims {
				if cl.Verdict != "not applicable" {
					judged[cl.ID] = true
				}
			}
		}
		c := cs[0]
		seeds := c.seeds()
		// A grid along the training length trains and scores each point at its own.
		var lens []string
		lo, hi := c.Lengths[0], c.Lengths[len(c.Lengths)-1]
		for _, p := range cs {
			if l := strconv.Itoa(p.TrainLen); !slices.Contains(lens, l) {
				lens = append(lens, l)
			}
			lo, hi = min(lo, p.Lengths[0]), max(hi, p.Lengths[len(p.Lengths)-1])
		}
		trained := strings.Join(lens, ", ")
		scored := fmt.Sprintf("%d to %d", lo, hi)
		if c.tasks() {
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, r := range c.Runs {
				for _, t := range r.Result.Tasks {
					lo, hi = math.Min(lo, t.Ratio), math.Max(hi, t.Ratio)
				}
			}
			trained, scored = "each task's window", fmt.Sprintf("%gx to %gx its task's sizes", lo, hi)
		}
		fmt.Fprintf(&b, "| [%s](%s) | %d | %d to %d | %s | %s | %s | %d | %.0f s (%s) | %s |\n",
			n, link(page, n), runs, seeds[0], seeds[len(seeds)-1], strings.Join(ws, ", "), trained,
			scored, len(judged), secs, duration(secs), strings.Join(cpus, "; "))
	}
	return b.String(), nil
}

// duration writes seconds as minutes, or hours past two.
func duration(s float64) string {
	if s >= 7200 {
		return fmt.Sprintf("%.1f h", s/3600)
	}
	return fmt.Sprintf("%.0f min", s/60)
}

// taskRuns says what a task comparison trains: its schemes, its tasks and its seeds.
func taskRuns(page string, args []string) (string, error) {
	if len(args) != 1 {
		return "", fmt.Errorf("task-runs: want one report, have %q", args)
	}
	c, err := loadComparison(args[0])
	if err != nil {
		return "", err
	}
	var schemes, tasks []string
	on := map[string][]string{} // the tasks each scheme trains on
	for _, r := range c.Runs {
		if len(r.Result.Tasks) == 0 {
			continue
		}
		task := r.Result.Tasks[0].Task
		if !slices.Contains(tasks, task) {
			tasks = append(tasks, task)
		}
		s := strings.TrimSuffix(r.Label, "_"+task)
		if !slices.Contains(schemes, s) {
			schemes = append(schemes, s)
		}
		if !slices.Contains(on[s], task) {
			on[s] = append(on[s], task)
		}
	}
	// The core tasks are those every scheme trained on more than half of the tasks shares. Schemes
	// on every core task are listed together, and then those that add the same tasks, together
	// with the tasks they add; one on some of them, with its tasks.
	var core []string
	for _, t := range tasks {
		shared := true
		for _, s := range schemes {
			if 2*len(on[s]) > len(tasks) && !slices.Contains(on[s], t) {
				shared = false
			}
		}
		if shared {
			core = append(core, t)
		}
	}
	var every, some, added []string
	adders := map[string][]string{} // the schemes that add each list of tasks
	for _, s := range schemes {
		extra := slices.DeleteFunc(slices.Clone(on[s]), func(t string) bool { return slices.Contains(core, t) })
		if len(on[s])-len(extra) < len(core) {
			some = append(some, s+" on "+and(on[s]))
			continue
		}
		every = append(every, s)
		if len(extra) > 0 {
			k := and(extra)
			if adders[k] == nil {
				added = append(added, k)
			}
			adders[k] = append(adders[k], s)
		}
	}
	for _, k := range added {
		some = append(some, and(adders[k])+" also on "+k)
	}
	tasks = core
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range c.Runs {
		for _, t := range r.Result.Tasks {
			lo, hi = math.Min(lo, t.Ratio), math.Max(hi, t.Ratio)
		}
	}
	what := and(every) + " on each of " + and(tasks)
	if len(some) > 0 {
		what += ", and " + strings.Join(some, "; ")
	}
	seeds := c.seeds()
	return fmt.Sprintf("The committed task comparison, [`results/%s`](%s), trains %s, seeds %d to %d (%d runs), and scores each model at %gx to %gx its task's largest training size.\n",
		args[0], link(page, args[0]), what, seeds[0], seeds[len(seeds)-1], len(c.Runs), lo, hi), nil
}

func and(s []string) string {
	switch len(s) {
	case 0:
		return "nothing"
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// effectiveTable is each series' effective length in each named comparison, the range over its
// seeds as multiples of the training length: the longest evaluated length up to which a run's
// perplexity stays within 10% of its own at the training length, worked out here from the runs'
// perplexities as perplexity.Effective does: `effective compare compare_large`.
func effectiveTable(page string, args []string) (string, error) {
	var cs []*comparison
	var labels []string
	for _, n := range args {
		c, err := loadComparison(n)
		if err != nil {
			return "", err
		}
		cs = append(cs, c)
		for _, s := range c.Series {
			if !slices.Contains(labels, s.Label) {
				labels = append(labels, s.Label)
			}
		}
	}
	var b strings.Builder
	b.WriteString("| run |")
	for i, c := range cs {
		fmt.Fprintf(&b, " [%s](%s), trained at %d |", args[i], link(page, args[i]), c.TrainLen)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(cs)) + "\n")
	for _, label := range labels {
		fmt.Fprintf(&b, "| %s |", label)
		for _, c := range cs {
			lo, hi := 0, 0
			for _, r := range c.Runs {
				if r.Label != label {
					continue
				}
				e := c.effective(r.Result.Status, r.Result.Lengths)
				if e > 0 && (lo == 0 || e < lo) {
					lo = e
				}
				hi = max(hi, e)
			}
			ratio := func(n int) string { return strconv.FormatFloat(float64(n)/float64(c.TrainLen), 'g', 3, 64) + "x" }
			switch {
			case lo == 0:
				b.WriteString(" |")
			case lo == hi:
				b.WriteString(" " + ratio(lo) + " |")
			default:
				b.WriteString(" " + ratio(lo) + " to " + ratio(hi) + " |")
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\nThe longest length up to which a run's perplexity stays within 10% of its own at the training length, as a multiple of it: the range over seeds.\n")
	return b.String(), nil
}

// effective is a run's effective length from its status and perplexities by length.
func (c *comparison) effective(status string, lengths []struct {
	Length     int      `json:"length"`
	Perplexity *float64 `json:"perplexity"`
}) int {
	if status != "ok" {
		return 0
	}
	var one *float64
	for _, l := range lengths {
		if l.Length == c.TrainLen {
			one = l.Perplexity
		}
	}
	if one == nil {
		return 0
	}
	eff := c.TrainLen
	for _, n := range c.Lengths {
		if n <= c.TrainLen {
			continue
		}
		var p *float64
		for _, l := range lengths {
			if l.Length == n {
				p = l.Perplexity
			}
		}
		if p == nil || *p > 1.1**one {
			break
		}
		eff = n
	}
	return eff
}
