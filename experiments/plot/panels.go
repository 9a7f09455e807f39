package plot

import (
	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A Grid is a figure of plots in a grid, their axes aligned, each with its legend, if any, in a
// column of its own to its right, under a title for them all, if any.
type Grid struct {
	Title string
	// XLabel, if any, is written under every plot, centred on its data, so that no panel's
	// x axis goes untitled: gonum places a log axis's own label's box at the arithmetic
	// middle of the axis, near its right end, and pads the plot to fit it there.
	XLabel string
	// Plots fill the grid row by row; a nil plot leaves its tile empty.
	Plots []*gonum.Plot
	// Legends are by plot; a nil legend, or no Legends, leaves no column.
	Legends       []*gonum.Legend
	Cols          int
	Width, Height vg.Length
	// LegendWidth is the width of each legend's column, when there are legends.
	LegendWidth vg.Length
}

// legendPad is the room a legend's column keeps right of its widest entry.
const legendPad = vg.Inch / 8

// FitLegends sets the legends' column to at least width and wide enough for the widest legend,
// so that no entry is cut at the image's edge; a caller sizes the figure after it.
func (fig *Grid) FitLegends(width vg.Length) {
	fig.LegendWidth = width
	for _, l := range fig.Legends {
		if l != nil {
			fig.LegendWidth = max(fig.LegendWidth, legendWidth(l)+legendPad)
		}
	}
}

// legendWidth is the width a legend's entries take, thumbnails and text.
func legendWidth(l *gonum.Legend) vg.Length {
	r := l.Rectangle(draw.Canvas{})
	return r.Max.X - r.Min.X
}

// legendHeight is the height a legend's entries take; 0 for none.
func legendHeight(l *gonum.Legend) vg.Length {
	if l == nil {
		return 0
	}
	r := l.Rectangle(draw.Canvas{})
	return r.Max.Y - r.Min.Y
}

// Save writes the figure as PNG and SVG.
func (fig Grid) Save(png, svg string) error {
	return saveCanvas(png, svg, fig.Width, fig.Height, fig.draw)
}

// draw lays the figure out on dc: the legends' columns are the padding right of each tile, so
// that gonum.Align, which aligns the plots' data areas, leaves them free.
func (fig Grid) draw(dc draw.Canvas) {
	rows := (len(fig.Plots) + fig.Cols - 1) / fig.Cols
	tiles := draw.Tiles{Rows: rows, Cols: fig.Cols, PadX: vg.Inch / 4, PadY: vg.Inch / 8,
		PadTop: vg.Inch / 8, PadBottom: vg.Inch / 8, PadLeft: vg.Inch / 8, PadRight: vg.Inch / 4}
	if len(fig.Legends) > 0 {
		tiles.PadX += fig.LegendWidth
		tiles.PadRight += fig.LegendWidth
	}
	if fig.Title != "" {
		sty := gonum.New().Title.TextStyle
		sty.Font.Size = vg.Points(13)
		dc.FillText(sty, vg.Point{X: fig.Width / 2, Y: fig.Height - tiles.PadTop}, fig.Title)
		tiles.PadTop += sty.Height(fig.Title) + vg.Inch/8
	}
	label := gonum.New().X.Label.TextStyle
	if fig.XLabel != "" {
		tiles.PadBottom += label.Height(fig.XLabel) + vg.Inch/16
		tiles.PadY += label.Height(fig.XLabel) + vg.Inch/16
	}
	grid := make([][]*gonum.Plot, rows)
	for i := range grid {
		grid[i] = make([]*gonum.Plot, fig.Cols)
		copy(grid[i], fig.Plots[i*fig.Cols:])
	}
	canvases := gonum.Align(grid, tiles, dc)
	for i, p := range fig.Plots {
		if p == nil {
			continue
		}
		p.Draw(canvases[i/fig.Cols][i%fig.Cols])
		if i < len(fig.Legends) && fig.Legends[i] != nil {
			tile := tiles.At(dc, i%fig.Cols, i/fig.Cols)
			fig.Legends[i].Draw(draw.Crop(tile, tile.Max.X-tile.Min.X+vg.Inch/6, fig.LegendWidth, 0, 0))
		}
	}
	if fig.XLabel == "" {
		return
	}
	label.YAlign = draw.YTop
	for i, p := range fig.Plots {
		if p == nil {
			continue
		}
		c := canvases[i/fig.Cols][i%fig.Cols]
		data := p.DataCanvas(c)
		dc.FillText(label, vg.Point{X: (data.Min.X + data.Max.X) / 2, Y: c.Min.Y - vg.Inch/32}, fig.XLabel)
	}
}
