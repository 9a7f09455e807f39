// Package dirlock gives one writer at a time a folder to write in: a lock file in the folder,
// held with flock(2) and holding the holder's PID, so that a second process is refused with a
// message naming the first. The kernel drops the lock when its holder exits, however it exits,
// so a crash never leaves a folder locked.
//
// A writer may be several processes that write a folder together by design, the shards of one
// comparison: each holds the lock shared (AcquireShared), under a key that names what they
// write, so that they admit each other and nothing else. Their lock file holds a line per
// holder, its PID, host and key.
package dirlock

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// File is the lock file's name in a locked folder.
const File = ".lock"

// TurnFile is the file of the turns that the holders of a shared lock take (Lock.Turn).
const TurnFile = ".lock-turn"

// busyTries and busyPause: how often, and how far apart, Acquire tries a lock held by another
// process before it gives up.
const (
	busyTries = 3
	busyPause = 20 * time.Millisecond
)

// ErrBusy says another process holds the lock.
var ErrBusy = errors.New("in use by another process")

// Lock is a held lock on a folder.
type Lock struct {
	f    *os.File
	dir  string
	path string
	key  string // "" for an exclusive lock
	// counted says that held counts this shared lock.
	counted bool
}

// Acquire locks dir, which must exist, for this process alone, without waiting. When another
// process holds it, exclusively or shared, the error wraps ErrBusy and names that process's PID.
func Acquire(dir string) (*Lock, error) { return acquire(dir, "") }

// AcquireShared locks dir, which must exist, for this process and any others that give the same
// key, without waiting: the processes that write the folder together, as a comparison's shards
// do. An exclusive holder refuses it, and so do holders of another key (processes that have
// exited are not counted); it refuses an exclusive Acquire. The key is a word: no spaces.
func AcquireShared(dir, key string) (*Lock, error) {
	if key == "" || strings.ContainsAny(key, " \t\n") {
		return nil, fmt.Errorf("locking %s: key %q, want a word", dir, key)
	}
	return acquire(dir, key)
}

func acquire(dir, key string) (*Lock, error) {
	path := filepath.Join(dir, File)
	// Release removes the file; a process that opened it just before may lock the removed
	// file. Retry until the locked file is the one at path, so two processes never both hold a
	// lock, each on a different file.
	// Some hold the lock for a moment only: a shared holder that asks whether it is the last,
	// on its way out, or whether it is alone, on its way in, and Check. A few tries, a little
	// apart, before a refusal.
	for tries := 1; ; tries++ {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("locking %s: %w", dir, err)
		}
		alone, err := lockFile(f, key != "")
		if errors.Is(err, unix.EWOULDBLOCK) && tries < busyTries {
			f.Close()
			time.Sleep(busyPause)
			continue
		}
		if errors.Is(err, unix.EWOULDBLOCK) {
			defer f.Close()
			return nil, busy(dir, f, key)
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", dir, err)
		}
		if !samePath(f, path) {
			f.Close()
			continue
		}
		l := &Lock{f: f, dir: dir, path: path, key: key}
		if err := l.register(alone); err != nil {
			l.Release()
			if errors.Is(err, ErrBusy) {
				return nil, err
			}
			return nil, fmt.Errorf("locking %s: %w", dir, err)
		}
		return l, nil
	}
}

// lockFile locks f without waiting, exclusively or shared, and reports whether this process was
// alone on it: always, when exclusive; when shared, whether it could first lock it exclusively,
// in which case no other holder is left and their lines may be cleared.
func lockFile(f *os.File, shared bool) (alone bool, err error) {
	fd := int(f.Fd())
	err = unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
	if !shared || (err != nil && !errors.Is(err, unix.EWOULDBLOCK)) {
		return err == nil, err
	}
	alone = err == nil
	if alone {
		// No holder: the lines of those that exited go before anyone shares it. Emptied while
		// held exclusively, the file never loses the line of a holder, which holds it shared.
		if err := f.Truncate(0); err != nil {
			return false, err
		}
	}
	// From exclusive to shared, or shared at once: an exclusive holder refuses it.
	return alone, unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB)
}

// samePath reports whether the open file f is the file at path, not one removed since.
func samePath(f *os.File, path string) bool {
	var held, named unix.Stat_t
	return unix.Fstat(int(f.Fd()), &held) == nil && unix.Stat(path, &named) == nil && held.Ino == named.Ino && held.Dev == named.Dev
}

// register writes this holder into the lock file: an exclusive holder's PID replaces what was
// there; a shared holder appends its line, once no live holder of another key is there, and
// checks again after, for a holder of another key that came at the same moment.
func (l *Lock) register(alone bool) error {
	if l.key == "" {
		if err := l.f.Truncate(0); err != nil {
			return err
		}
		_, err := l.f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		return err
	}
	if !alone {
		if err := l.otherKey(); err != nil {
			return err
		}
	}
	host, _ := os.Hostname()
	if host == "" || strings.ContainsAny(host, " \t\n") {
		host = "-"
	}
	line := fmt.Sprintf("%d %s %s\n", os.Getpid(), host, l.key)
	// O_APPEND: each holder's line goes whole at the end, whatever the others write.
	a, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = a.WriteString(line)
	if cerr := a.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := l.otherKey(); err != nil {
		return err
	}
	held.add(l.f, l.key, 1)
	l.counted = true
	return nil
}

// held counts the shared locks this process holds, by lock file and key: a line of this
// process's PID counts as a holder only while it holds a lock of that key there, so that the
// line of a lock it was refused or has released, which stays in the file while others share it,
// is not taken for a holder while the process lives on.
var held = heldLocks{n: map[heldKey]int{}}

type heldKey struct {
	dev, ino uint64
	key      string
}

type heldLocks struct {
	sync.Mutex
	n map[heldKey]int
}

func fileKey(f *os.File, key string) (heldKey, bool) {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return heldKey{}, false
	}
	return heldKey{uint64(st.Dev), uint64(st.Ino), key}, true
}

func (h *heldLocks) add(f *os.File, key string, n int) {
	k, ok := fileKey(f, key)
	if !ok {
		return
	}
	h.Lock()
	defer h.Unlock()
	if h.n[k] += n; h.n[k] <= 0 {
		delete(h.n, k)
	}
}

func (h *heldLocks) has(f *os.File, key string) bool {
	k, ok := fileKey(f, key)
	h.Lock()
	defer h.Unlock()
	return ok && h.n[k] > 0
}

// otherKey returns an error wrapping ErrBusy when the lock file has a live holder of another
// key.
func (l *Lock) otherKey() error {
	hs, err := holders(l.f)
	if err != nil {
		return err
	}
	for _, h := range hs {
		if h.shared && h.key != l.key {
			return busyError(l.dir, l.path, hs, l.key)
		}
	}
	return nil
}

// holder is one line of a lock file: an exclusive holder's PID, or a shared holder's PID, host
// and key.
type holder struct {
	pid    int
	host   string
	key    string
	shared bool
}

// holders reads the holders a lock file names, leaving out the shared holders on this host
// that have exited.
func holders(f *os.File) ([]holder, error) {
	b := make([]byte, 64<<10)
	n, err := f.ReadAt(b, 0)
	if err != nil && n == 0 && !errors.Is(err, io.EOF) {
		return nil, err
	}
	b = b[:n]
	// A line still being appended has no newline yet: left out.
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[:i+1]
	} else {
		b = nil
	}
	here, _ := os.Hostname()
	self := os.Getpid()
	var out []holder
	for _, line := range strings.Split(string(b), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pid, err := strconv.Atoi(fields[0])
		if err != nil || pid <= 0 {
			continue
		}
		switch len(fields) {
		case 1:
			out = append(out, holder{pid: pid})
		case 3:
			h := holder{pid: pid, host: fields[1], key: fields[2], shared: true}
			if h.host == here && (errors.Is(unix.Kill(pid, 0), unix.ESRCH) || pid == self && !held.has(f, h.key)) {
				continue // exited or released: its line stays until the file is emptied
			}
			out = append(out, h)
		}
	}
	return out, nil
}

// busy is the error for dir, whose lock file f another process holds, naming that process.
func busy(dir string, f *os.File, key string) error {
	hs, _ := holders(f)
	return busyError(dir, f.Name(), hs, key)
}

// busyError names the holders of dir's lock file path: an exclusive holder's PID, or the shared
// holders' PIDs, said to be of another comparison when key, the refused process's, is another.
func busyError(dir, path string, hs []holder, key string) error {
	var shared []holder
	for _, h := range hs {
		if !h.shared {
			return fmt.Errorf("%s is %w: process %d holds %s", dir, ErrBusy, h.pid, path)
		}
		if key == "" || h.key != key {
			shared = append(shared, h)
		}
	}
	if len(shared) == 0 {
		return fmt.Errorf("%s is %w: another process holds %s", dir, ErrBusy, path)
	}
	here, _ := os.Hostname()
	var names []string
	seen := map[string]bool{}
	for _, h := range shared {
		name := strconv.Itoa(h.pid)
		if h.host != here && h.host != "-" {
			name += " on " + h.host
		}
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	list := strings.Join(names, ", ")
	if len(names) > 3 {
		list = fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
	}
	who := "the shards of one comparison"
	if key != "" {
		who = "the shards of another comparison"
	}
	what := "process"
	if len(names) > 1 {
		what = "processes"
	}
	return fmt.Errorf("%s is %w: %s (%s %s) hold %s", dir, ErrBusy, who, what, list, path)
}

// Busy returns an error wrapping ErrBusy, naming the holder, when another process holds dir's
// lock exclusively, and nil otherwise, without creating or changing anything: for checks made
// before a command writes, whose advice (replace this folder's files) would be wrong for a
// folder in use.
func Busy(dir string) error {
	f, err := os.Open(filepath.Join(dir, File))
	if err != nil {
		return nil // no lock file: no holder
	}
	defer f.Close()
	// A shared lock conflicts with a holder's exclusive one; it is dropped with the file.
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); errors.Is(err, unix.EWOULDBLOCK) {
		return busy(dir, f, "")
	}
	return nil
}

// Check returns an error wrapping ErrBusy, naming the holders, when Acquire (key "") or
// AcquireShared with key would be refused now, and nil otherwise, without creating or changing
// anything: for a command's -check.
func Check(dir, key string) error {
	f, err := os.Open(filepath.Join(dir, File))
	if err != nil {
		return nil // no lock file: no holder
	}
	defer f.Close()
	how := unix.LOCK_EX
	if key != "" {
		how = unix.LOCK_SH
	}
	// The lock taken to ask is dropped with the file.
	if err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB); errors.Is(err, unix.EWOULDBLOCK) {
		return busy(dir, f, key)
	}
	if key == "" {
		return nil
	}
	hs, err := holders(f)
	if err != nil {
		return nil
	}
	for _, h := range hs {
		if h.shared && h.key != key {
			return busyError(dir, f.Name(), hs, key)
		}
	}
	return nil
}

// Shared reports whether the lock is shared (AcquireShared).
func (l *Lock) Shared() bool { return l != nil && l.key != "" }

// Turn waits until this process alone, of those that share the lock, holds the folder's turn
// (a second lock, on TurnFile), for a step they may take only one at a time: writing the files
// they share. It returns the function that ends the turn. An exclusive lock has the folder
// alone already: its turn is at once.
func (l *Lock) Turn() (end func(), err error) {
	if !l.Shared() {
		return func() {}, nil
	}
	path := filepath.Join(l.dir, TurnFile)
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("locking %s: %w", l.dir, err)
		}
		// Waits for the holder of the turn, which is a shard of the same writer, writing.
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", l.dir, err)
		}
		if !samePath(f, path) {
			f.Close()
			continue
		}
		return func() {
			os.Remove(path)
			f.Close()
		}, nil
	}
}

// Release removes the lock file, unless others share it, and drops the lock. It is safe to
// call more than once.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	// Remove while holding the lock alone, so no one locks a file about to vanish unnoticed.
	// A shared holder holds it alone when it can lock it exclusively; if it cannot, others
	// share it and its line stays, ignored once this process has exited.
	if l.counted {
		held.add(l.f, l.key, -1)
		l.counted = false
	}
	if l.key == "" || unix.Flock(int(l.f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
		if samePath(l.f, l.path) {
			os.Remove(l.path)
		}
	}
	l.f.Close()
	l.f = nil
}
