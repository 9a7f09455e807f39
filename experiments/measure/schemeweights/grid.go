package schemeweights

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"extrapolate/experiments/measure"
)

// GridSection gathers the weights of every point's measured runs, to show FIRE's threshold and
// far bias against the points' training lengths; nil when no point has FIRE's or KERPLE's.
func (Measure) GridSection(points []measure.GridPoint) (measure.Section, error) {
	g := gridSection{}
	found := false
	for _, p := range points {
		runs, err := measured(p.Report)
		if err != nil {
			return nil, fmt.Errorf("grid point %s: %w", p.Name, err)
		}
		found = found || anyWeights(runs)
		g.points = append(g.points, section{rep: p.Report, runs: runs})
		g.names = append(g.names, p.Name)
	}
	if !found {
		return nil, nil
	}
	return g, nil
}

type gridSection struct {
	names  []string
	points []section
}

// Write writes every point's runs' weights as CSV, the point's name first.
func (g gridSection) Write(dir string) error {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(append([]string{"point"}, csvHeader...))
	for i, s := range g.points {
		for _, r := range s.runs {
			for _, row := range r.rows() {
				w.Write(append([]string{g.names[i]}, row...))
			}
		}
	}
	w.Flush()
	return measure.WriteFile(filepath.Join(dir, GridCSV), b.Bytes())
}

// Markdown writes FIRE's threshold, inputs and far bias by point, at multiples of each point's
// own training length, which the grid's points share.
func (g gridSection) Markdown(w io.Writer) {
	first := g.points[0].rep
	wrote := false
	for i, s := range g.points {
		s.eachFIRE(func(label string, l int, st fireStat) {
			if !wrote {
				g.fireHeader(w, first)
				wrote = true
			}
			fmt.Fprintf(w, "| %s | %d | %s | %d | %s | %.3g | %.3f | %.3f |%s\n", g.names[i], s.rep.TrainLen, label, l,
				st.thresholdCell(), st.c, st.trainedInput, st.input[len(st.input)-1], cells(st.bias, "%.3f"))
		})
	}
	if wrote {
		longest := measure.Ratio(first.Lengths[len(first.Lengths)-1], first.TrainLen)
		fmt.Fprintf(w, "\nWhere the threshold stays above the longest window's positions, the MLP's input at the farthest key grows past the largest training gave it (input %s against input in training) and the bias there is the MLP extrapolated; where the training length passes the threshold, both inputs are 1 and the far bias is one training saw. Every point's runs, seed by seed, are in `%s`.\n", longest, GridCSV)
	}
}

// fireHeader begins the grid's FIRE table, its columns at the multiples of the training length
// the points share.
func (g gridSection) fireHeader(w io.Writer, first *measure.Report) {
	longest := measure.Ratio(first.Lengths[len(first.Lengths)-1], first.TrainLen)
	fmt.Fprintf(w, "\n## FIRE's threshold by training length\n\nEach layer's threshold |m·L0| (mean over seeds, range) and c, the largest MLP input training gave, the input at the farthest key at %s, and the bias there at each multiple of the training length (the last query of a window and its first key, mean over heads and seeds):\n\n| point | trained at | run | layer | threshold | c | input in training | input %s |", longest, longest)
	for _, n := range first.Lengths {
		fmt.Fprintf(w, " bias %s |", measure.Ratio(n, first.TrainLen))
	}
	fmt.Fprintf(w, "\n|---|---:|---|---:|---:|---:|---:|---:|%s\n", strings.Repeat("---:|", len(first.Lengths)))
}
