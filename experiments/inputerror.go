package experiments

import "errors"

// InputError marks an error caused by what the user gave — a config, a checkpoint, a results
// folder in use — rather than by the run itself, so that commands can exit 2 for it, as for any
// bad input found before a run starts, and 1 for a failure during a run.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// IsInputError reports whether err, or an error it wraps, is an InputError.
func IsInputError(err error) bool {
	var ie *InputError
	return errors.As(err, &ie)
}

func inputError(err error) error {
	if err == nil {
		return nil
	}
	return &InputError{Err: err}
}
