// Package exitcode maps errors to the process exit codes every phptune command shares:
// 0 ok, 1 the run failed, 2 bad usage, bad input or a missing prerequisite,
// 3 a threshold the user set was not met, 4 undecided (gate: the budget could not decide), 130 interrupted.
package exitcode

import (
	"context"
	"errors"
	"fmt"
)

// The exit codes, as the design fixes them.
const (
	OK          = 0
	Failed      = 1
	Usage       = 2
	Threshold   = 3
	Interrupted = 130
)

// Undecided is a verdict the run was asked for that its budget could not give (phptune gate): apart from a shown
// regression (3), so that a CI job chooses whether it fails.
const Undecided = 4

// Error carries an exit code with the error that caused it.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// UsageErrorf is bad usage or bad input: exit 2.
func UsageErrorf(format string, a ...any) error {
	return &Error{Code: Usage, Err: fmt.Errorf(format, a...)}
}

// MissingErrorf is a missing prerequisite (a program, a package): exit 2.
func MissingErrorf(format string, a ...any) error {
	return &Error{Code: Usage, Err: fmt.Errorf(format, a...)}
}

// ThresholdErrorf is a user-set threshold that was not met: exit 3.
func ThresholdErrorf(format string, a ...any) error {
	return &Error{Code: Threshold, Err: fmt.Errorf(format, a...)}
}

// WithCode attaches code to err (nil stays nil).
func WithCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Err: err}
}

// Of returns the exit code for err: the code of the outermost *Error in its chain,
// 130 for a cancelled context, 1 otherwise.
func Of(err error) int {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if errors.Is(err, context.Canceled) {
		return Interrupted
	}
	return Failed
}
