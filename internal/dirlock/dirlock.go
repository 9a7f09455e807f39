// Package dirlock gives one process at a time a folder to write in: a lock file in the folder,
// held with flock(2) and holding the holder's PID, so that a second process is refused with a
// message naming the first. The kernel drops the lock when its holder exits, however it exits,
// so a crash never leaves a folder locked.
package dirlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// File is the lock file's name in a locked folder.
const File = ".lock"

// ErrBusy says another process holds the lock.
var ErrBusy = errors.New("in use by another process")

// Lock is a held lock on a folder.
type Lock struct {
	f    *os.File
	path string
}

// Acquire locks dir, which must exist, without waiting. When another process holds it the error
// wraps ErrBusy and names that process's PID.
func Acquire(dir string) (*Lock, error) {
	path := filepath.Join(dir, File)
	// Release removes the file; a process that opened it just before may lock the removed
	// file. Retry until the locked file is the one at path, so two processes never both hold a
	// lock, each on a different file.
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("locking %s: %w", dir, err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			defer f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, busy(dir, f)
			}
			return nil, fmt.Errorf("locking %s: %w", dir, err)
		}
		var held, named unix.Stat_t
		if unix.Fstat(int(f.Fd()), &held) == nil && unix.Stat(path, &named) == nil && held.Ino == named.Ino && held.Dev == named.Dev {
			l := &Lock{f: f, path: path}
			if err := l.writePID(); err != nil {
				l.Release()
				return nil, fmt.Errorf("locking %s: %w", dir, err)
			}
			return l, nil
		}
		f.Close()
	}
}

// busy is the error for dir, whose lock file f another process holds, naming that process.
func busy(dir string, f *os.File) error {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	holder := "another process"
	if pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n]))); err == nil {
		holder = fmt.Sprintf("process %d", pid)
	}
	return fmt.Errorf("%s is %w: %s holds %s", dir, ErrBusy, holder, f.Name())
}

// Busy returns an error wrapping ErrBusy, naming the holder, when another process holds dir's
// lock, and nil otherwise, without creating or changing anything: for checks made before a
// command writes, whose advice (replace this folder's files) would be wrong for a folder in use.
func Busy(dir string) error {
	f, err := os.Open(filepath.Join(dir, File))
	if err != nil {
		return nil // no lock file: no holder
	}
	defer f.Close()
	// A shared lock conflicts with a holder's exclusive one; it is dropped with the file.
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); errors.Is(err, unix.EWOULDBLOCK) {
		return busy(dir, f)
	}
	return nil
}

func (l *Lock) writePID() error {
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err := l.f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

// Release removes the lock file and drops the lock. It is safe to call more than once.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	// Remove while still holding the lock, so no one locks a file about to vanish unnoticed.
	os.Remove(l.path)
	l.f.Close()
	l.f = nil
}
