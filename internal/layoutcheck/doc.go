// Package layoutcheck holds no code: its test checks that docs/layout.md is true of the tree.
// Every package of the module must be named in the page's first table, which says what each
// holds, and be in one row of its table of layers, whose order says which packages may import
// which; a row or a path the tree no longer has fails too. The test reads both tables from the
// page, so that moving or adding a package is a change to the page, not to the test.
package layoutcheck
