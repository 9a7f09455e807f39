package model

import (
	"fmt"
	"math"

	"extrapolate/model/nn"
	"extrapolate/position"
)

// remap turns a distance map into what attention takes for n positions: the spans of each
// query, and the rotation's tables at the map's alternate positions (rot nil for a layer that
// does not rotate). A bias by distance takes the mapped distance when the map's paper applies it
// to bias schemes (position.MapsBias); the spans still mask every layer.
func remap(m position.DistanceMap, rot *position.Rotation, bias nn.BiasForm, n int) (*nn.Remap, error) {
	r := &nn.Remap{Spans: func(i int, dst []nn.Span) []nn.Span {
		for _, s := range m.Spans(i, nil) {
			dst = append(dst, nn.Span(s))
		}
		return dst
	}}
	if rot != nil {
		if rot.KeyCos != nil {
			// xPos scales queries and keys by their own positions: at the map's alternate
			// positions both scales would have to be recomputed, which no map's paper does.
			return nil, fmt.Errorf("model: the %s distance map needs a rotation that is the same for queries and keys", m.Name())
		}
		r.AltCos, r.AltSin = rotationAt(rot, m.AltQuery, n)
		r.AltKeyCos, r.AltKeySin = rotationAt(rot, m.AltKey, n)
	}
	if bias == nn.ByDistance && position.MapsBias(m) {
		r.AltDistance = func(i, j int) int {
			return min(i, max(0, int(math.Round(m.AltQuery(i)-m.AltKey(j)))))
		}
	}
	return r, nil
}

// rotationAt tabulates rot's cosines and sines, scaled by its attention factor, at pos(t) for
// t < n: what position.NewRotation tabulates at t itself.
func rotationAt(rot *position.Rotation, pos func(int) float64, n int) (cos, sin []float64) {
	p := len(rot.InvFreq)
	cos, sin = make([]float64, n*p), make([]float64, n*p)
	for t := 0; t < n; t++ {
		at := pos(t)
		for i, f := range rot.InvFreq {
			s, c := math.Sincos(at * f)
			cos[t*p+i], sin[t*p+i] = rot.AttentionFactor*c, rot.AttentionFactor*s
		}
	}
	return cos, sin
}
