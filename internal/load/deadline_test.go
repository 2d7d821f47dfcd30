package load

import (
	"testing"
	"time"
)

// TestDeadlineReusedWithinSlack: requests reuse the socket's deadline while it is within the slack after their
// own, and near the limit each gets its exact deadline, or the limit itself.
func TestDeadlineReusedWithinSlack(t *testing.T) {
	t0 := time.Unix(1000, 0)
	timeout := 10 * time.Second
	slack := deadlineSlack(timeout)
	limit := t0.Add(20 * time.Second)
	var d deadline
	first := d.next(t0, timeout, limit)
	if first != t0.Add(timeout+slack) {
		t.Fatalf("first deadline %v after t0, want the timeout plus %v", first.Sub(t0), slack)
	}
	for _, after := range []time.Duration{time.Millisecond, slack} {
		if got := d.next(t0.Add(after), timeout, limit); got != first {
			t.Errorf("a request %v later got a new deadline %v", after, got.Sub(t0))
		}
	}
	if got := d.next(t0.Add(slack+time.Nanosecond), timeout, limit); got == first || got.Before(t0.Add(slack+time.Nanosecond+timeout)) {
		t.Errorf("a request past the slack kept an early deadline %v", got.Sub(t0))
	}
	near := limit.Add(-timeout - slack/2)
	if got := d.next(near, timeout, limit); got != near.Add(timeout) {
		t.Errorf("near the limit: %v, want the exact deadline", got.Sub(t0))
	}
	if got := d.next(limit.Add(-time.Second), timeout, limit); got != limit {
		t.Errorf("past the limit: %v, want the limit", got.Sub(t0))
	}
	if got := (&deadline{}).next(t0, timeout, time.Time{}); got != t0.Add(timeout+slack) {
		t.Errorf("without a limit: %v", got.Sub(t0))
	}
}
