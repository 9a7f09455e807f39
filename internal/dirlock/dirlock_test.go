package dirlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAcquire(t *testing.T) {
	dir := t.TempDir()
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	// flock locks belong to open files, so a second open in this process conflicts as another
	// process's would.
	_, err = Acquire(dir)
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), fmt.Sprintf("process %d", os.Getpid())) {
		t.Fatalf("second Acquire: %v, want ErrBusy naming this process", err)
	}
	l.Release()
	l.Release()
	if _, err := os.Stat(filepath.Join(dir, File)); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("Release left the lock file")
	}
	l, err = Acquire(dir)
	if err != nil {
		t.Fatalf("after Release: %v", err)
	}
	l.Release()
}

// TestBusy tells a folder in use from one that is not, without creating or changing anything.
func TestBusy(t *testing.T) {
	dir := t.TempDir()
	if err := Busy(dir); err != nil {
		t.Fatalf("a folder never locked: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, File)); err == nil {
		t.Fatal("Busy created the lock file")
	}
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	// flock locks conflict between open files, even within one process.
	if err := Busy(dir); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), fmt.Sprintf("process %d", os.Getpid())) {
		t.Fatalf("a locked folder: %v, want ErrBusy naming this process", err)
	}
	l.Release()
	if err := Busy(dir); err != nil {
		t.Fatalf("a released folder: %v", err)
	}
}
