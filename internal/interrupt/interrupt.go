// Package interrupt is how the commands stop on a signal, the one way for all of them: the
// first SIGINT, SIGTERM or SIGHUP cancels a context, so that the command stops at a point where
// it can keep what it has (train's checkpoint) or writes nothing (eval), and says so; a second
// quits at once with exit status 130, as a shell reports an interrupted command.
package interrupt

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// ExitCode is the exit status of a command stopped by a signal.
const ExitCode = 130

// Context returns a context cancelled by the first signal, after writing stopping to w (nil
// for nothing); a second signal writes "<cmd>: quitting" and exits with ExitCode. stop
// releases the signals and cancels the context.
func Context(w io.Writer, cmd, stopping string) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		if _, ok := <-ch; !ok {
			return
		}
		if w != nil {
			fmt.Fprintf(w, "\n%s: %s (again to quit at once)\n", cmd, stopping)
		}
		cancel()
		if _, ok := <-ch; !ok {
			return
		}
		fmt.Fprintf(os.Stderr, "%s: quitting\n", cmd)
		os.Exit(ExitCode)
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel()
	}
}
