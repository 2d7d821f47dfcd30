//go:build workloads

package workload

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A package apt cannot install: the error names the step and the package, with apt's own reason, and nothing
// of the workload is left. (Runs apt-get update: in `make test-workloads` only.)
func TestPrepareFailedInstallSaysWhich(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("installing packages needs root")
	}
	dir := filepath.Join(t.TempDir(), "fake")
	p := fakePreset(func(ctx context.Context, p *Prep) error {
		t.Error("provisioning ran although the install failed")
		return nil
	})
	p.Packages = []string{"phptune-no-such-package"}
	_, _, err := p.Prepare(context.Background(), dir, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "install packages phptune-no-such-package") ||
		!strings.Contains(err.Error(), "Unable to locate package") {
		t.Fatalf("Prepare = %v, want the failed install named with apt's reason", err)
	}
	for _, d := range []string{dir, dir + ".partial"} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s left behind after a failed install", d)
		}
	}
}
