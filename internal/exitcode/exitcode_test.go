package exitcode

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestOf(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, OK},
		{"plain", errors.New("boom"), Failed},
		{"usage", UsageErrorf("--rate %d: want more", -1), Usage},
		{"missing", MissingErrorf("nginx not found"), Usage},
		{"threshold", ThresholdErrorf("p99 over"), Threshold},
		{"wrapped usage", fmt.Errorf("tune: %w", UsageErrorf("bad")), Usage},
		{"cancelled", fmt.Errorf("trial: %w", context.Canceled), Interrupted},
		// The outermost code wins: a command that gives a cancelled run its own code keeps it.
		{"coded cancel", WithCode(Failed, context.Canceled), Failed},
		{"outermost", WithCode(Threshold, UsageErrorf("inner")), Threshold},
	} {
		if got := Of(c.err); got != c.want {
			t.Errorf("%s: Of(%v) = %d, want %d", c.name, c.err, got, c.want)
		}
	}
}

func TestErrorKeepsItsCause(t *testing.T) {
	if WithCode(Usage, nil) != nil {
		t.Error("WithCode(code, nil) != nil")
	}
	cause := errors.New("cause")
	err := WithCode(Usage, cause)
	if err.Error() != "cause" || !errors.Is(err, cause) {
		t.Errorf("WithCode: %q, Is(cause) %v; want the cause's message and chain", err, errors.Is(err, cause))
	}
	if got := UsageErrorf("--x %s: %w", "y", cause).Error(); got != "--x y: cause" {
		t.Errorf("UsageErrorf message %q", got)
	}
	if !errors.Is(UsageErrorf("--x: %w", cause), cause) {
		t.Error("UsageErrorf drops its %w cause")
	}
}

// TestCodesAreTheDesigns: scripts and CI jobs test these numbers; they do not change.
func TestCodesAreTheDesigns(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want int
	}{{"OK", OK, 0}, {"Failed", Failed, 1}, {"Usage", Usage, 2}, {"Threshold", Threshold, 3}, {"Undecided", Undecided, 4},
		{"Interrupted", Interrupted, 130}} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
}

// TestErrorAsThroughWrapping: a caller finds the coded error, its code and its cause through fmt.Errorf's %w.
func TestErrorAsThroughWrapping(t *testing.T) {
	cause := errors.New("p99 412ms over 200ms")
	err := fmt.Errorf("tune: %w", fmt.Errorf("final: %w", ThresholdErrorf("goal missed: %w", cause)))
	var e *Error
	if !errors.As(err, &e) || e.Code != Threshold {
		t.Fatalf("errors.As(%v) = %v, %+v; want the *Error with code %d", err, errors.As(err, &e), e, Threshold)
	}
	if !errors.Is(err, cause) || err.Error() != "tune: final: goal missed: p99 412ms over 200ms" {
		t.Errorf("%q: Is(cause) %v; want the whole message and the cause in the chain", err, errors.Is(err, cause))
	}
}
