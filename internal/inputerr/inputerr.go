// Package inputerr marks the errors caused by what the user gave — a config, a checkpoint, a
// results folder in use — rather than by the work itself, so that commands can exit 2 for them,
// as for any bad input found before a run starts, and 1 for a failure during a run. The run, the
// comparison and the evaluation of a checkpoint each find such errors; they share this mark.
package inputerr

import "errors"

// Error marks Err as the user's input's fault.
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether err, or an error it wraps, is an Error.
func Is(err error) bool {
	var ie *Error
	return errors.As(err, &ie)
}

// Wrap marks err as the input's fault; nil stays nil, so that a check's result can be passed
// through as it is.
func Wrap(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Err: err}
}
