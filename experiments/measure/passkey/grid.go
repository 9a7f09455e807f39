package passkey

import (
	"fmt"
	"strings"

	"extrapolate/data"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/plot"
)

// textTable is a run's retrieval as text: a row per depth, a column per length.
func textTable(cells []Cell, trainLen int) string {
	g := gridOf(cells)
	var b strings.Builder
	fmt.Fprintf(&b, "%-14s", "passkey depth")
	for _, n := range g.lengths {
		fmt.Fprintf(&b, " %10s", fmt.Sprintf("%d (%gx)", n, float64(n)/float64(trainLen)))
	}
	b.WriteByte('\n')
	for j, d := range g.depths {
		fmt.Fprintf(&b, "%-14s", fmt.Sprintf("%g%%", 100*d))
		for i := range g.lengths {
			if v := g.acc[i][j]; v < 0 {
				fmt.Fprintf(&b, " %10s", "n/a")
			} else {
				fmt.Fprintf(&b, " %10s", measure.Percent(v))
			}
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "accuracy: all five digits right, greedily; chance %s\n", measure.Percent(data.PasskeyChance))
	return b.String()
}

// grid is retrieval accuracy by length (i) and depth (j); -1 where not applicable.
type grid struct {
	lengths []int
	depths  []float64
	acc     [][]float64
}

// draw writes the grid as a heat map, the training length marked, and the fine-tuning length
// when it is not 0.
func (g grid) draw(png, svg, title string, trainLen, fineTune int) error {
	return plot.HeatMap(png, svg, title, trainLen, fineTune, g.lengths, g.depths, g.acc)
}

// gridOf arranges cells, averaging cells of the same length and depth (seeds).
func gridOf(cells []Cell) grid {
	var g grid
	li, di := map[int]int{}, map[float64]int{}
	for _, c := range cells {
		if _, ok := li[c.Length]; !ok {
			li[c.Length] = len(g.lengths)
			g.lengths = append(g.lengths, c.Length)
		}
		if _, ok := di[c.Depth]; !ok {
			di[c.Depth] = len(g.depths)
			g.depths = append(g.depths, c.Depth)
		}
	}
	sum := make([][]float64, len(g.lengths))
	cnt := make([][]int, len(g.lengths))
	g.acc = make([][]float64, len(g.lengths))
	for i := range g.lengths {
		sum[i], cnt[i], g.acc[i] = make([]float64, len(g.depths)), make([]int, len(g.depths)), make([]float64, len(g.depths))
	}
	for _, c := range cells {
		if c.Applicable {
			i, j := li[c.Length], di[c.Depth]
			sum[i][j] += c.Accuracy
			cnt[i][j]++
		}
	}
	for i := range g.lengths {
		for j := range g.depths {
			g.acc[i][j] = -1
			if cnt[i][j] > 0 {
				g.acc[i][j] = sum[i][j] / float64(cnt[i][j])
			}
		}
	}
	return g
}
