package workload

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/exitcode"
)

// A service that exits under a run ends the run's context, and the error says which service and that the results
// are kept, whatever the run made of its cancellation; a run whose services live returns its own error.
func TestDuringAServiceDies(t *testing.T) {
	exited := make(chan struct{})
	s := &Services{Names: []string{"mariadb"}, exited: exited}
	err := s.During(context.Background(), func(ctx context.Context) error {
		close(exited)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Second):
			return errors.New("the run's context did not end")
		}
	})
	if !ServiceDied(err) || exitcode.Of(err) != exitcode.Failed || !strings.Contains(err.Error(), "(mariadb)") ||
		!strings.Contains(err.Error(), "results so far are kept") {
		t.Errorf("err = %v (exit %d), want the service's death, exit %d", err, exitcode.Of(err), exitcode.Failed)
	}
}

func TestDuringTheServicesLive(t *testing.T) {
	own := errors.New("the run's own")
	for _, s := range []*Services{{}, {Names: []string{"mariadb"}, exited: make(chan struct{})}} {
		err := s.During(context.Background(), func(ctx context.Context) error {
			if ctx.Err() != nil {
				return errors.New("the context ended under a living service")
			}
			return own
		})
		if err != own || ServiceDied(err) {
			t.Errorf("err = %v, want the run's own", err)
		}
	}
}
