// Package writable checks that a results folder can be written before any work starts, so that
// a command refuses an output folder before it spends time on work it could not save. The run,
// the comparison's runner and cmd/eval each check their folder this way.
package writable

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Check checks that dir, or the nearest folder above it that exists, takes a new file, by
// creating one and removing it at once.
func Check(dir string) error {
	d := dir
	for {
		st, err := os.Stat(d)
		if err == nil {
			if !st.IsDir() {
				return fmt.Errorf("results folder %s: %s is a file, not a folder", dir, d)
			}
			break
		}
		if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("results folder %s: %w", dir, unwrapPath(err))
		}
		// A symbolic link to nothing does not exist for Stat, yet MkdirAll cannot create it.
		if target, err := os.Readlink(d); err == nil {
			return fmt.Errorf("results folder %s: %s is a symbolic link to %s, which does not exist", dir, d, target)
		}
		up := filepath.Dir(d)
		if up == d {
			break
		}
		d = up
	}
	f, err := os.CreateTemp(d, ".writable*")
	if err != nil {
		return fmt.Errorf("results folder %s: cannot write in %s: %w", dir, d, unwrapPath(err))
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// unwrapPath drops the operation and path an *os.PathError adds, for a message that names the
// path itself.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
