package measure

// MeasuresOf is measuresOf, for the registry's test, which registers the built-in measures from
// outside the package.
var MeasuresOf = measuresOf
