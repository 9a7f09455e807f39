// Package doclinks holds no code: its test checks that every relative link in README.md,
// docs/*.md and docs/notes/*.md names a file that exists and, for a link into a Markdown page,
// a heading that page has, so that moving a section or a file cannot leave a link dangling
// unnoticed.
package doclinks
