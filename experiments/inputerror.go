package experiments

import "extrapolate/internal/inputerr"

// InputError marks an error caused by what the user gave rather than by the run itself, so that
// commands can exit 2 for it and 1 for a failure during a run (inputerr.Error).
type InputError = inputerr.Error

// IsInputError reports whether err, or an error it wraps, is an InputError.
func IsInputError(err error) bool { return inputerr.Is(err) }
