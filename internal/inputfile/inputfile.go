// Package inputfile opens and reads the files a user names (configs, corpora, checkpoints)
// without trusting them to be what they claim: a FIFO or a device is refused before it can block
// or stream without end, and a read stops at a stated bound.
package inputfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrTooLarge says a file is larger than the bound its reader states.
var ErrTooLarge = errors.New("too large")

// Open opens path for reading and returns it with its size. It refuses anything but a regular
// file. The file is opened with O_NONBLOCK, so that opening a FIFO with no writer returns at once
// instead of waiting for one; the flag has no effect on reading a regular file. Errors are of
// the form "path: reason".
func Open(path string) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s: not a regular file (%s)", path, kind(st.Mode()))
	}
	return f, st.Size(), nil
}

// ReadFile reads the regular file at path, refusing one of more than limit bytes. The limit is
// enforced on the bytes read, not only on the size stat reports, since a file can grow while it
// is read.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, size, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > limit {
		return nil, fmt.Errorf("%s: %w: %d bytes, above the limit of %d", path, ErrTooLarge, size, limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: %w: more than the limit of %d bytes", path, ErrTooLarge, limit)
	}
	return b, nil
}

// kind names a file mode that is not a regular file's.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return m.Type().String()
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
