// Package ctxwatch interrupts a connection's exchange under way when the caller's context ends, with one
// registration per context rather than per request, so that a client's hot path does not allocate.
package ctxwatch

import (
	"context"
	"sync/atomic"
)

// Watch follows one context at a time for a client that runs one exchange at a time on a *T.
// The zero value is not usable: build it with New.
type Watch[T any] struct {
	interrupt func(*T) // makes a blocked exchange on *T return; called from another goroutine
	active    atomic.Pointer[T]
	done      <-chan struct{}
	stop      func() bool
	gen       atomic.Uint64
}

// New returns a Watch that calls interrupt on the active *T when the followed context ends.
func New[T any](interrupt func(*T)) *Watch[T] { return &Watch[T]{interrupt: interrupt} }

// Follow makes ctx the context whose end interrupts the active exchange. Calling it again with the same ctx
// costs nothing; a new ctx replaces the registration.
func (w *Watch[T]) Follow(ctx context.Context) {
	done := ctx.Done()
	if done == w.done {
		return
	}
	w.register(ctx, done)
}

// Release drops the registration; call it when the client is closed.
func (w *Watch[T]) Release() { w.register(context.Background(), nil) }

func (w *Watch[T]) register(ctx context.Context, done <-chan struct{}) {
	if w.stop != nil {
		w.stop()
		w.stop = nil
	}
	gen := w.gen.Add(1)
	w.done = done
	if done == nil {
		return
	}
	w.stop = context.AfterFunc(ctx, func() {
		// A stale callback (the client moved to another context meanwhile) must not interrupt a newer exchange.
		if w.gen.Load() != gen {
			return
		}
		if c := w.active.Load(); c != nil {
			w.interrupt(c)
		}
	})
}

// Begin publishes c as the exchange under way and reports whether the context has already ended, in which
// case the caller must not start the exchange (a cancellation that came before Begin found nothing to interrupt).
func (w *Watch[T]) Begin(c *T) (cancelled bool) {
	w.active.Store(c)
	if Done(w.done) {
		w.active.Store(nil)
		return true
	}
	return false
}

// End marks the exchange finished; it reports whether the context ended meanwhile, in which case the
// connection may have been interrupted (its deadline poisoned) and must be dropped.
func (w *Watch[T]) End() (cancelled bool) {
	w.active.Store(nil)
	return Done(w.done)
}

// Done reports whether done is closed.
func Done(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}
