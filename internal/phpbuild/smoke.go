package phpbuild

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os/exec"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/stack"
)

// SmokeCheck is one request and what its response must hold.
type SmokeCheck struct {
	Method string
	URI    string
	Status int
	Marker string
}

// DemoChecks are the demo app's routes and content markers (workloads/demo/README.md).
var DemoChecks = []SmokeCheck{
	{"GET", "/", 200, "<!-- phptune-demo:list -->"},
	{"GET", "/articles?page=2&sort=title", 200, "<!-- phptune-demo:list -->"},
	{"GET", "/articles/7", 200, "<!-- phptune-demo:detail -->"},
	{"GET", "/articles/99999", 404, "<!-- phptune-demo:notfound -->"},
	{"GET", "/api/articles?per_page=5", 200, `"marker":"phptune-demo:api"`},
	{"GET", "/contact", 200, "<!-- phptune-demo:form -->"},
}

// FPMDefines are the -d settings a built php-fpm runs with: opcache loaded by absolute path and on.
func FPMDefines(opcache string) map[string]string {
	d := map[string]string{"opcache.enable": "1", "opcache.memory_consumption": "128", "opcache.jit": "off"}
	if opcache != "" {
		d["zend_extension"] = opcache
	}
	return d
}

// Smoke serves app with the prefix's php-fpm behind nginx (internal/stack) and checks every response. A binary
// that fails here is never measured nor offered.
func Smoke(ctx context.Context, bin Binaries, app fs.FS, checks []SmokeCheck, log io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if bin.FPM != "" && bin.Opcache != "" {
		// Its php.ini must load opcache: a build measured or tuned without it would be compared unfairly.
		out, err := exec.CommandContext(ctx, bin.FPM, "-m").Output()
		if err != nil || !strings.Contains(string(out), "Zend OPcache") {
			return fmt.Errorf("%s -m does not list Zend OPcache (%v): its php.ini does not load %s", bin.FPM, err, bin.Opcache)
		}
	}
	s, err := stack.Start(ctx, stack.Config{
		AppFS:   app,
		PHPFPM:  bin.FPM,
		Pools:   []stack.Pool{{Name: "smoke", Listen: stack.ListenUnix, PM: "static", MaxChildren: 2}},
		Defines: FPMDefines(""), // the prefix's php.ini (EnsureINI) loads opcache, as phptune tune will run it
	})
	if err != nil {
		return fmt.Errorf("php-fpm %s does not start the demo app: %w", bin.FPM, err)
	}
	defer s.Stop(context.Background())
	client := &http.Client{Timeout: 30 * time.Second}
	for _, c := range checks {
		req, err := http.NewRequestWithContext(ctx, c.Method, strings.TrimSuffix(s.HTTPURL, "/")+c.URI, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return fmt.Errorf("%s %s: %w", c.Method, c.URI, err)
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
		resp.Body.Close()
		fmt.Fprintf(log, "smoke %s %s: %d, %d bytes\n", c.Method, c.URI, resp.StatusCode, len(body))
		if resp.StatusCode != c.Status || !strings.Contains(string(body), c.Marker) {
			return fmt.Errorf("%s %s: status %d (want %d), marker %q %s; php-fpm log: %s", c.Method, c.URI,
				resp.StatusCode, c.Status, c.Marker, found(strings.Contains(string(body), c.Marker)), s.LogTail("php-fpm.log", 3))
		}
	}
	return nil
}

func found(ok bool) string {
	if ok {
		return "found"
	}
	return "missing"
}
