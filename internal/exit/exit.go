// Package exit is how every command ends, the one way for all seven: its exit status, its error
// on one line after its name, and what a signal does.
//
// A command exits 0 when it did what it was asked, BadInput (2) when what it was given is wrong
// (a flag, a config, a file: the one line names it), Failure (1) when the work failed on the way,
// and Interrupted (130, as a shell reports an interrupted command) when a signal stopped it. The
// first SIGINT, SIGTERM or SIGHUP cancels the command's context and says so: the command stops
// at its next safe point, keeping what it can (train's checkpoint) and writing nothing
// half-done; a second quits at once, but never in the middle of the command's output (Write).
//
// A library marks the errors that are the input's fault with inputerr, and an interruption by
// wrapping ErrInterrupted; Fail reads both.
package exit

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"

	"extrapolate/internal/inputerr"
)

// The exit statuses of a command that did not do what it was asked.
const (
	Failure     = 1   // the work failed on the way
	BadInput    = 2   // the input is wrong: a flag, a config, a checkpoint, a folder
	Interrupted = 130 // a signal stopped the command
)

// ErrInterrupted says the work stopped because a signal asked it to: an error wrapping it exits
// with Interrupted.
var ErrInterrupted = errors.New("interrupted")

// errNotWritten is what Write returns after a signal: the output was not started.
var errNotWritten = fmt.Errorf("%w before writing; nothing written", ErrInterrupted)

// A Command is one run of a command: its name, which starts each of its lines on stderr, where
// those lines go, and the signals it has been sent. The zero value is not usable: see New.
type Command struct {
	name   string
	stderr io.Writer

	signalled atomic.Bool
	// quitting says a second signal has come: the command quits as soon as no output is being
	// written.
	quitting atomic.Bool
	// writing is held while the command writes its output, so that a second signal waits for
	// the output to be whole before quitting.
	writing sync.Mutex
}

// New returns the command name, whose lines go to stderr.
func New(name string, stderr io.Writer) *Command {
	return &Command{name: name, stderr: stderr}
}

// Parse parses args into fs quietly: a bad flag, or an argument that is not a flag (a command
// takes flags only), comes back as an error of one line naming it, for Bad, rather than with the
// whole usage; -h writes fs.Usage and returns flag.ErrHelp, for which Bad returns 0.
func (c *Command) Parse(fs *flag.FlagSet, args []string) error {
	usage, out := fs.Usage, fs.Output()
	fs.Init(fs.Name(), flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(out)
	fs.Usage = usage
	switch {
	case errors.Is(err, flag.ErrHelp):
		if usage == nil {
			usage = fs.PrintDefaults
		}
		usage()
	case err == nil && fs.NArg() > 0:
		err = fmt.Errorf("unexpected argument %q (flags only; -h lists them)", fs.Arg(0))
	}
	return err
}

// Bad writes err on one line after the command's name and returns BadInput: for what the
// command finds wrong in its input itself. flag.ErrHelp, for -h, is no error: Bad writes
// nothing and returns 0, the usage written.
func (c *Command) Bad(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	c.say(err)
	return BadInput
}

// Fail writes err on one line after the command's name and returns the exit status it calls
// for: Interrupted for an error wrapping ErrInterrupted, BadInput for one marked as the input's
// fault (inputerr), Failure for any other.
func (c *Command) Fail(err error) int {
	c.say(err)
	return Code(err)
}

// Code is the exit status err calls for, as Fail returns it; 0 for nil.
func Code(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrInterrupted):
		return Interrupted
	case inputerr.Is(err):
		return BadInput
	}
	return Failure
}

func (c *Command) say(err error) {
	fmt.Fprintf(c.stderr, "%s: %v\n", c.name, err)
}

// Signals catches SIGINT, SIGTERM and SIGHUP until stop is called. The first cancels ctx and
// writes "<name>: <stopping> (again to quit at once)", stopping saying what the command will do;
// a second writes "<name>: quitting" and exits with Interrupted at once, or, while Write is
// writing the output, once it is written. stop releases the signals and cancels ctx.
func (c *Command) Signals(stopping string) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		select {
		case <-ch:
		case <-done:
			return
		}
		c.signalled.Store(true)
		fmt.Fprintf(c.stderr, "\n%s: %s (again to quit at once)\n", c.name, stopping)
		cancel()
		select {
		case <-ch:
		case <-done:
			return
		}
		c.quitting.Store(true)
		c.writing.Lock() // Write quits itself once its output is whole, holding it
		c.quit()
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
			cancel()
		})
	}
}

// quit ends the process on a second signal.
func (c *Command) quit() {
	fmt.Fprintf(c.stderr, "%s: quitting\n", c.name)
	os.Exit(Interrupted)
}

// Interrupted reports whether a signal has come since Signals.
func (c *Command) Interrupted() bool { return c.signalled.Load() }

// Write is the command's safe point before its output: it runs write, which writes the output,
// unless a signal has come, and then returns an error wrapping ErrInterrupted, having written
// nothing. A second signal waits for write to return, so that the output is whole or not
// started; a first that comes while write runs lets it finish.
func (c *Command) Write(write func() error) error {
	c.writing.Lock()
	defer c.writing.Unlock()
	if c.Interrupted() {
		return errNotWritten
	}
	err := write()
	if c.quitting.Load() {
		c.quit()
	}
	return err
}
