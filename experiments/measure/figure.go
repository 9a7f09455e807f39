package measure

import "extrapolate/experiments/plot"

// Line is one series' line in a comparison's figure: its points, x on a log axis.
type Line = plot.Line

// Figure is a comparison figure as every measure draws one: a panel per family of schemes,
// every panel on one y range, each series in its colour of every figure of the comparison,
// plain RoPE in grey in each panel, the training length marked, x on a log axis. XLabel and
// YLabel name each axis with its unit (tokens, nats per token).
type Figure struct {
	Title, XLabel, YLabel string
	LogY                  bool
	// Lines are by series of the report (Report.Series); a series without points is left out.
	Lines []Line
	// Guide, when it has points, is drawn thin and dotted in every panel.
	Guide Line
}

// WriteFigure draws f into the files png and svg; with no line to draw it writes nothing.
func (rep *Report) WriteFigure(png, svg string, f Figure) error {
	return rep.figure(f).Save(png, svg)
}

// figure lays f out by family of schemes, each series in its style of every figure of the
// report.
func (rep *Report) figure(f Figure) plot.ByFamily {
	return plot.ByFamily{Title: f.Title, XLabel: f.XLabel, YLabel: f.YLabel, LogY: f.LogY, TrainLen: rep.TrainLen,
		Lines: f.Lines, Styles: rep.Styles(), Families: rep.Families(), Reference: rep.Reference(), Guide: f.Guide}
}
