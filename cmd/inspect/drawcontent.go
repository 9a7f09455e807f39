package main

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// maxPlots bounds the panels of a picture of what the layers made of a text: a heat map per
// layer and head, which at 64 takes seconds to draw and is already too many to read.
const maxPlots = 64

// contentPlots draws what each layer that reads the content made of the text: FoX's running
// sum of log forget gates by token and its bias c_i − c_j by head; CoPE's positions by head and
// the last query's against distance; stick-breaking's weights by head and each row's remainder.
func contentPlots(c *content) ([]*plot.Plot, error) {
	var plots []*plot.Plot
	for _, l := range c.Layers {
		prefix := fmt.Sprintf("layer %d, %s", l.Layer, l.Scheme)
		var line *plot.Plot
		var err error
		switch {
		case l.Cumulative != nil:
			line, err = byToken(prefix+": c_t, the running sum of log f", "c_t", l.Cumulative)
			plots = append(plots, line)
			plots = append(plots, triangleMaps(prefix, "c_i − c_j, added to the score", l.ForgetBias)...)
		case l.Positions != nil:
			plots = append(plots, triangleMaps(prefix, fmt.Sprintf("position p_ij (npos %d)", l.NPos), l.Positions)...)
			line, err = lastQuery(prefix, l.Positions, c.IDs)
			plots = append(plots, line)
		case l.Weights != nil:
			plots = append(plots, triangleMaps(prefix, "weight A_ij", l.Weights)...)
			line, err = byToken(prefix+": each query's remainder 1 − Σ_j A_ij", "unattended", l.Remainder)
			plots = append(plots, line)
		}
		if err != nil {
			return nil, err
		}
	}
	return plots, nil
}

// triangleMaps draws a heat map of queries by keys for each head's triangle, the keys after
// the query, and those a window hides, white.
func triangleMaps(prefix, what string, heads []triangle) []*plot.Plot {
	var out []*plot.Plot
	for h, t := range heads {
		z := func(i, j int) float64 {
			if j > i {
				return math.NaN()
			}
			return t[i][j]
		}
		out = append(out, heatMap(fmt.Sprintf("%s, head %d: %s", prefix, h, what), "key j (token)", "query i (token)", len(t), len(t), z))
	}
	return out
}

// byToken draws one line per head of a value at each token of the text.
func byToken(title, yLabel string, heads [][]float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "token t"
	p.Y.Label.Text = yLabel
	for h, v := range heads {
		if err := addLine(p, fmt.Sprintf("head %d", h), h, func(t int) (float64, float64) { return float64(t), v[t] }, len(v)); err != nil {
			return nil, err
		}
	}
	p.Legend.Top = true
	return p, nil
}

// lastQuery draws the last query's position of each key against its distance back, with the
// keys that are newlines marked, so that a head counting lines shows its steps at them.
func lastQuery(prefix string, heads []triangle, ids []int) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = prefix + ": the last query's positions"
	p.X.Label.Text = "distance i−j back from the last token (tokens)"
	p.Y.Label.Text = "position p"
	var newlines plotter.XYs
	for h, t := range heads {
		row := t[len(t)-1]
		i, seen := len(row)-1, 0
		for seen < len(row) && !math.IsNaN(row[i-seen]) { // the keys a window leaves it
			seen++
		}
		if err := addLine(p, fmt.Sprintf("head %d", h), h, func(d int) (float64, float64) { return float64(d), row[i-d] }, seen); err != nil {
			return nil, err
		}
		for j, id := range ids {
			if id == '\n' && !math.IsNaN(row[j]) {
				newlines = append(newlines, plotter.XY{X: float64(i - j), Y: row[j]})
			}
		}
	}
	if len(newlines) > 0 {
		s, err := plotter.NewScatter(newlines)
		if err != nil {
			return nil, err
		}
		s.GlyphStyle.Shape = draw.CircleGlyph{}
		s.GlyphStyle.Radius = vg.Points(2.5)
		s.GlyphStyle.Color = colors[5]
		p.Add(s)
		p.Legend.Add("newline keys", s)
	}
	p.Legend.Top = true
	return p, nil
}
