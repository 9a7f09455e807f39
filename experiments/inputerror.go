package experiments

import "extrapolate/internal/inputerr"

// IsInputError reports whether err, or an error it wraps, is marked as caused by what the user
// gave rather than by the run itself, so that commands can exit 2 for it and 1 for a failure
// during a run (inputerr.Is).
func IsInputError(err error) bool { return inputerr.Is(err) }
