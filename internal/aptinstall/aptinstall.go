// Package aptinstall installs Debian packages for phptune's own use and leaves the host's services as they were
// (no service a package would start is left running or enabled): install.sh, embedded, is the one way phptune
// installs packages, from make (scripts/install-deps.sh) and from the binary (workload prepare, build
// --install-deps).
package aptinstall

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/procgroup"
	"github.com/phptune/phptune/internal/textline"
)

//go:embed install.sh
var script string

// Installed reports whether a Debian package is installed.
func Installed(pkg string) bool {
	out, err := exec.Command("dpkg-query", "-W", "-f=${Status}", pkg).Output()
	return err == nil && strings.Contains(string(out), "ok installed")
}

// Missing returns the packages among pkgs that are not installed.
func Missing(pkgs []string) []string {
	var missing []string
	for _, p := range pkgs {
		if !Installed(p) {
			missing = append(missing, p)
		}
	}
	return missing
}

// Install installs the missing ones among pkgs with apt-get, asking nothing; what it installs and every service
// it stopped or disabled again is written to log. Not root, or no apt-get: a missing-prerequisite error (exit 2)
// that names the command to run.
func Install(ctx context.Context, pkgs []string, log io.Writer) error {
	if len(Missing(pkgs)) == 0 {
		return nil
	}
	cmd := exec.Command("sh", append([]string{"-c", script, "install.sh"}, pkgs...)...)
	var last tail
	cmd.Stdout, cmd.Stderr = io.MultiWriter(log, &last), io.MultiWriter(log, &last)
	// Its own process group, stopped with SIGTERM on cancel: the script puts the host's policy-rc.d back.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("install %s: %w", strings.Join(pkgs, " "), err)
	}
	err := procgroup.Wait(ctx, cmd, 30*time.Second)
	if err != nil && err == ctx.Err() { // stopped, not failed
		return err
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == exitcode.Usage {
		return exitcode.MissingErrorf("%s", last.line())
	}
	if err != nil {
		return fmt.Errorf("install %s: %v: %s", strings.Join(pkgs, " "), err, last.line())
	}
	return nil
}

// tail keeps the last line written to it.
type tail struct{ buf []byte }

func (t *tail) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > 4096 {
		t.buf = t.buf[len(t.buf)-4096:]
	}
	return len(p), nil
}

func (t *tail) line() string {
	return textline.Last(string(t.buf))
}
