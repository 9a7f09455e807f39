package dirlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// TestShared lets the processes that give one key share a folder, as a comparison's shards do,
// and refuses an exclusive holder and another key's holders while they hold it, and them while
// an exclusive holder does: each refusal names the holders' PID.
func TestShared(t *testing.T) {
	dir := t.TempDir()
	pid := fmt.Sprintf("process %d", os.Getpid())
	a, err := AcquireShared(dir, "k1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := AcquireShared(dir, "k1")
	if err != nil {
		t.Fatalf("a second holder of the same key: %v", err)
	}
	if _, err := Acquire(dir); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "shards of one comparison") || !strings.Contains(err.Error(), pid) {
		t.Fatalf("Acquire while shared: %v, want ErrBusy naming the shards' process", err)
	}
	if err := Check(dir, ""); !errors.Is(err, ErrBusy) {
		t.Fatalf("Check for an exclusive lock while shared: %v, want ErrBusy", err)
	}
	if err := Check(dir, "k1"); err != nil {
		t.Fatalf("Check for the same key: %v", err)
	}
	if err := Busy(dir); err != nil {
		t.Fatalf("Busy (exclusive holders only) while shared: %v", err)
	}
	for range 2 { // the refused line must not count as a holder the second time
		if _, err := AcquireShared(dir, "k2"); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "another comparison") {
			t.Fatalf("another key while shared: %v, want ErrBusy saying so", err)
		}
	}
	if err := Check(dir, "k2"); !errors.Is(err, ErrBusy) {
		t.Fatalf("Check for another key: %v, want ErrBusy", err)
	}
	a.Release()
	if _, err := os.Stat(filepath.Join(dir, File)); err != nil {
		t.Fatal("the first of two shared holders removed the lock file")
	}
	if _, err := Acquire(dir); !errors.Is(err, ErrBusy) {
		t.Fatalf("Acquire while one holder is left: %v, want ErrBusy", err)
	}
	b.Release()
	if _, err := os.Stat(filepath.Join(dir, File)); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the last shared holder left the lock file")
	}
	// Another key once the first key's holders are gone; then an exclusive holder refuses it.
	c, err := AcquireShared(dir, "k2")
	if err != nil {
		t.Fatalf("another key after the first key's holders left: %v", err)
	}
	c.Release()
	x, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := AcquireShared(dir, "k1"); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), pid+" holds") {
		t.Fatalf("AcquireShared while held exclusively: %v, want ErrBusy naming the holder", err)
	}
	if err := Check(dir, "k1"); !errors.Is(err, ErrBusy) {
		t.Fatalf("Check for a shared lock while held exclusively: %v, want ErrBusy", err)
	}
	x.Release()
	if _, err := AcquireShared(dir, "two words"); err == nil || errors.Is(err, ErrBusy) {
		t.Fatalf("a key with a space: %v, want refused", err)
	}
}

// TestSharedStaleLines: the lines of shared holders that exited without removing them (killed)
// are cleared by the next holder, and another key is not refused for them.
func TestSharedStaleLines(t *testing.T) {
	dir := t.TempDir()
	host, _ := os.Hostname()
	// A PID beyond pid_max is no process.
	if err := os.WriteFile(filepath.Join(dir, File), []byte(fmt.Sprintf("99999999 %s k1\n", host)), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := AcquireShared(dir, "k2")
	if err != nil {
		t.Fatalf("over an exited holder's line: %v", err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, File))
	if want := fmt.Sprintf("%d %s k2\n", os.Getpid(), host); string(b) != want {
		t.Fatalf("lock file %q, want %q", b, want)
	}
	l.Release()
}

// TestTurn: of the holders of a shared lock, one at a time holds the turn; the next waits for it.
func TestTurn(t *testing.T) {
	dir := t.TempDir()
	a, _ := AcquireShared(dir, "k")
	b, _ := AcquireShared(dir, "k")
	defer a.Release()
	defer b.Release()
	end, err := a.Turn()
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan func())
	go func() {
		end, err := b.Turn()
		if err != nil {
			t.Error(err)
		}
		got <- end
	}()
	select {
	case <-got:
		t.Fatal("a second holder took the turn while the first held it")
	case <-time.After(100 * time.Millisecond):
	}
	end()
	select {
	case end := <-got:
		end()
	case <-time.After(5 * time.Second):
		t.Fatal("the second holder never got the turn")
	}
	if _, err := os.Stat(filepath.Join(dir, TurnFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the last turn left its file")
	}
	x, err := Acquire(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer x.Release()
	if end, err := x.Turn(); err != nil {
		t.Fatal(err)
	} else {
		end()
	}
}
