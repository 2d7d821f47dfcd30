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
