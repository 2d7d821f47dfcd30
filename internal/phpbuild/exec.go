package phpbuild

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/procgroup"
)

// command prepares a child in its own process group that dies with phptune (Pdeathsig) and whose whole group
// is killed on cancellation, so an interrupted make leaves no compilers running.
func command(ctx context.Context, dir string, env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = env
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	procgroup.KillOnCancel(cmd, 5*time.Second)
	return cmd
}

// runLogged runs a command with its output appended to log.
func runLogged(ctx context.Context, dir string, log io.Writer, name string, args ...string) error {
	return runEnv(ctx, dir, nil, log, name, args...)
}

func runEnv(ctx context.Context, dir string, env []string, log io.Writer, name string, args ...string) error {
	if log == nil {
		log = io.Discard
	}
	fmt.Fprintf(log, "\n$ %s %s\n", name, strings.Join(args, " "))
	cmd := command(ctx, dir, env, name, args...)
	cmd.Stdout = log
	cmd.Stderr = log
	err := cmd.Run()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// tailFile returns the last n lines of a file that hold something, joined by newlines.
func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var keep []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) != "" {
			keep = append(keep, l)
		}
	}
	if len(keep) > n {
		keep = keep[len(keep)-n:]
	}
	return strings.Join(keep, "\n")
}

// errorLines picks the compiler's and make's error lines from a log (the last n of them), falling back to the
// log's tail: what a user needs to see of a failed build.
func errorLines(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var errs []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "error:") || strings.Contains(l, "Error ") || strings.HasPrefix(l, "configure: error") ||
			strings.Contains(l, "undefined reference") {
			errs = append(errs, l)
		}
	}
	if len(errs) == 0 {
		return tailFile(path, n)
	}
	if len(errs) > n {
		errs = errs[len(errs)-n:]
	}
	return strings.Join(errs, "\n")
}

func environ() []string { return os.Environ() }
