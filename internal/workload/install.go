package workload

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/aptinstall"
	"github.com/phptune/phptune/internal/atomicfile"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/procgroup"
	"github.com/phptune/phptune/internal/stack"
)

// installPackages installs the missing ones with apt-get, asking nothing and saying what it installs; a
// service a package starts or enables (mariadb) is stopped and disabled again (aptinstall).
func installPackages(ctx context.Context, pkgs []string, log io.Writer) error {
	missing := aptinstall.Missing(pkgs)
	if len(missing) == 0 {
		return nil
	}
	// Debian's web apps depend on an httpd: with nginx already there, apt does not pull in apache2.
	if _, err := os.Stat("/usr/sbin/nginx"); err != nil {
		return exitcode.MissingErrorf("install nginx first (apt-get install nginx-light), or apt-get pulls in apache2 for %s", strings.Join(missing, " "))
	}
	if err := aptinstall.Install(ctx, missing, log); err != nil {
		return err
	}
	if still := aptinstall.Missing(pkgs); len(still) > 0 {
		return fmt.Errorf("install packages: %s still not installed", strings.Join(still, " "))
	}
	return nil
}

// run runs a command in its own process group (killed with phptune), returning its output; a failure says
// which command and the last lines it printed.
func run(ctx context.Context, dir string, env []string, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		if _, lerr := exec.LookPath(name); lerr != nil {
			return nil, exitcode.MissingErrorf("%s not found: %v", name, lerr)
		}
		return nil, err
	}
	err := procgroup.Wait(ctx, cmd, 3*time.Second)
	if err != nil && err == ctx.Err() { // stopped, not failed
		return out.Bytes(), err
	}
	if err != nil {
		return out.Bytes(), fmt.Errorf("%s %s: %v: %s", filepath.Base(name), strings.Join(shortArgs(args), " "), err, lastLines(out.String(), 6))
	}
	return out.Bytes(), nil
}

func shortArgs(args []string) []string {
	var out []string
	for _, a := range args {
		if len(a) > 60 {
			a = a[:57] + "..."
		}
		out = append(out, a)
	}
	return out
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// php runs a PHP script with php-cli in dir, the script given as source text.
func php(ctx context.Context, dir string, defines map[string]string, script string) ([]byte, error) {
	bin, err := exec.LookPath("php")
	if err != nil {
		return nil, exitcode.MissingErrorf("php (php-cli) not found: apt-get install php8.2-cli")
	}
	f, err := os.CreateTemp("", "phptune-prep-*.php")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(script); err != nil {
		f.Close()
		return nil, err
	}
	f.Close()
	args := []string{"-d", "display_errors=stderr", "-d", "error_reporting=E_ALL & ~E_DEPRECATED"}
	for k, v := range defines {
		args = append(args, "-d", k+"="+v)
	}
	args = append(args, f.Name())
	out, err := run(ctx, dir, os.Environ(), bin, args...)
	if err != nil {
		return out, fmt.Errorf("php-cli: %w", err)
	}
	return out, nil
}

// writeFile writes through a temporary file and a rename.
func writeFile(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := atomicfile.Write(path, data, mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// copyTree copies src into dst following symlinks (Debian's packaged apps link into /etc and /var/lib),
// skipping the names in skip (relative paths, slash-separated).
func copyTree(src, dst string, skip map[string]bool) error {
	return stack.CopyKeep(src, dst, func(rel string) bool { return !skip[rel] })
}

// IncludedFiles requests uri from the app in docroot with php-cli, in a scratch copy (caches a request
// writes stay out of the docroot), checks the response against marker and returns how many PHP files a warm
// request included: the framework-hello-world case is the one where opcache matters most.
func IncludedFiles(ctx context.Context, docroot, front, uri, marker string) (int, error) {
	re, err := regexp.Compile(marker)
	if err != nil {
		return 0, err
	}
	scratch, err := os.MkdirTemp("", "phptune-check-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(scratch)
	doc := filepath.Join(scratch, "app")
	if err := copyTree(docroot, doc, nil); err != nil {
		return 0, fmt.Errorf("copy %s: %w", docroot, err)
	}
	_, query, _ := strings.Cut(uri, "?")
	script := `<?php
$doc = ` + phpString(doc) + `; $front = ` + phpString(front) + `;
$_SERVER = array_merge($_SERVER, ['REQUEST_URI' => ` + phpString(uri) + `, 'QUERY_STRING' => ` + phpString(query) + `,
    'REQUEST_METHOD' => 'GET', 'HTTP_HOST' => 'localhost', 'SERVER_NAME' => 'localhost', 'SERVER_PORT' => '80',
    'SCRIPT_NAME' => '/' . $front, 'PHP_SELF' => '/' . $front, 'SCRIPT_FILENAME' => $doc . '/' . $front,
    'DOCUMENT_ROOT' => $doc, 'REMOTE_ADDR' => '127.0.0.1', 'SERVER_PROTOCOL' => 'HTTP/1.1']);
parse_str($_SERVER['QUERY_STRING'], $_GET);
$_REQUEST = $_GET;
$argv = []; $_SERVER['argv'] = []; $_SERVER['argc'] = 0;
chdir($doc);
register_shutdown_function(function () {
    // Less this wrapper itself.
    fwrite(STDOUT, "\nphptune-included-files=" . (count(get_included_files()) - 1) . "\n");
});
require $doc . '/' . $front;
`
	// Twice: the first request of a copy compiles the framework's caches (container, templates) and includes
	// files a warm request never does; the second is the one every later request looks like.
	var out []byte
	for i := 0; i < 2; i++ {
		if out, err = php(ctx, doc, nil, script); err != nil {
			return 0, err
		}
	}
	s := string(out)
	i := strings.LastIndex(s, "phptune-included-files=")
	if i < 0 {
		return 0, fmt.Errorf("the request did not finish: %s", lastLines(s, 5))
	}
	n, err := strconv.Atoi(strings.TrimSpace(s[i+len("phptune-included-files="):]))
	if err != nil {
		return 0, fmt.Errorf("included files: %w", err)
	}
	if !re.MatchString(s[:i]) {
		return n, fmt.Errorf("%s: the response lacks /%s/: %s", uri, marker, lastLines(s[:i], 5))
	}
	return n, nil
}
