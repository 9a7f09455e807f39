package attention

import "extrapolate/experiments/measure"

// Lengths is what the recorder of a run's attention found, before it writes it.
func Lengths(rec measure.Recorder) []Length { return rec.(*run).lengths }
