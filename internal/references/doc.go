// Package references holds no code: its test checks docs/references.md against the registries,
// so that a scheme, scaling, distance map, attention temperature, task, measure or claim added
// without its reference, or a paper a task cites without its entry, fails the tests rather than
// going unlisted.
package references
