// Package exit maps errors to perfgate's process exit codes, in one place.
//
// The codes (DESIGN.md): 0 pass, 1 regression, 2 usage or input error, 3 the run
// itself failed. Code wraps nothing it does not know about as a pass: an error
// that carries no code is a failed run (3), so a broken run can never exit 0.
package exit

import "errors"

// Exit codes.
const (
	OK         = 0 // the run passed
	Regression = 1 // a gate found a significant regression beyond tolerance
	Usage      = 2 // bad flags, config, workload or other input
	RunFailed  = 3 // the run itself failed: stack down, no successful request, ...
)

// Error attaches an exit code to an error.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// WithCode wraps err so that Code reports code; nil stays nil.
func WithCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Err: err}
}

// UsageError marks err as bad input (exit 2).
func UsageError(err error) error { return WithCode(Usage, err) }

// RunError marks err as a failed run (exit 3).
func RunError(err error) error { return WithCode(RunFailed, err) }

// Code returns the exit code for err: 0 for nil, the attached code for an
// *Error anywhere in its chain, and RunFailed for anything else.
func Code(err error) int {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return RunFailed
}
