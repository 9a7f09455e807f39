package model

// Param returns the weight with the given name, or nil. Only tests look weights up by name (the
// program walks Params, or the typed fields); it is here, in a test file of package model, so
// that the tests of model_test see it too.
func (m *Model) Param(name string) *Param {
	for _, p := range m.Params {
		if p.Name == name {
			return p
		}
	}
	return nil
}
