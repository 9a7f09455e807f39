// Package atomicfile writes files so that a reader sees the old content or the new, never a part:
// the data goes to a temporary file in the same folder, is synced, and is renamed over the target.
package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// tempInfix separates a temporary file's target from its random part: the temporary file of
// NAME is .NAME.tmp followed by the digits os.CreateTemp puts for its "*".
const tempInfix = ".tmp"

// tempPattern is os.CreateTemp's pattern for the temporary file of target.
func tempPattern(target string) string { return "." + target + tempInfix + "*" }

// WriteFile writes data to path atomically. Its errors name path, never the temporary file,
// whose name means nothing to the user.
func WriteFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, tempPattern(filepath.Base(path)))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("writing %s: folder %s: %w", path, dir, cause(err))
		}
		return fmt.Errorf("writing %s: %w", path, cause(err))
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, cause(err))
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, cause(err))
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		// Rename would say "file exists" about the temporary file.
		os.Remove(tmp)
		return fmt.Errorf("writing %s: a folder is there", path)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, cause(err))
	}
	// Sync the folder so that the rename itself survives a crash.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// cause strips the path or paths an error of package os names, which here are the temporary
// file's, and keeps what went wrong.
func cause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// TempTarget reports whether name, a file name without its folder, is that of a temporary file
// WriteFile makes, and if so the name of the file it was to replace. A file a user named alike
// (.env.tmp, .x.tmpl) is not one: WriteFile's random part is digits only, and never empty.
func TempTarget(name string) (target string, ok bool) {
	rest, ok := strings.CutPrefix(name, ".")
	if !ok {
		return "", false
	}
	i := strings.LastIndex(rest, tempInfix)
	if i <= 0 {
		return "", false
	}
	random := rest[i+len(tempInfix):]
	if random == "" || strings.Trim(random, "0123456789") != "" {
		return "", false
	}
	return rest[:i], true
}
