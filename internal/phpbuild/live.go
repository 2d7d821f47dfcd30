package phpbuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stack"
)

// LiveTrainer trains with php-cgi -T (CGI) and then with the instrumented php-fpm under phptune's own load, so
// FPM's code paths are trained too (--train-mode live).
//
// Workers run as an unprivileged user that cannot write the build tree: they write their profiles under a
// GCOV_PREFIX directory set in the pool's environment, where the php-cgi profiles were moved first, so that
// libgcov accumulates into them; afterwards they move back. php-fpm is stopped with SIGQUIT (internal/stack
// does): on SIGTERM the workers exit without writing profiles. The master's own counts (it serves no request)
// are dropped.
type LiveTrainer struct {
	CGI      *CGITrainer
	App      stack.Config // the app as served (AppFS or App and its settings); the pool and binary are set here
	Duration time.Duration
}

// Hash identifies the training inputs.
func (t *LiveTrainer) Hash() string {
	h := sha256.New()
	fmt.Fprintf(h, "live\n%s\n%v\n", t.CGI.Hash(), t.Duration)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Train runs the CGI training, then the live one.
func (t *LiveTrainer) Train(ctx context.Context, cgi, opcache string, log io.Writer) error {
	if err := t.CGI.Train(ctx, cgi, opcache, log); err != nil {
		return err
	}
	tree := filepath.Dir(filepath.Dir(filepath.Dir(cgi)))
	fpm := filepath.Join(tree, "sapi", "fpm", "php-fpm")
	if _, err := os.Stat(fpm); err != nil {
		return fmt.Errorf("live training: no instrumented php-fpm (%v): was fpm configured?", err)
	}
	gcov, err := os.MkdirTemp("", "phptune-gcov-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(gcov)
	if err := os.Chmod(gcov, 0o777); err != nil {
		return err
	}
	if err := mirrorDirs(tree, filepath.Join(gcov, tree)); err != nil {
		return err
	}
	moved, err := moveProfiles(tree, filepath.Join(gcov, tree))
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "live: %d php-cgi profiles moved under %s\n", moved, gcov)
	trainErr := t.serve(ctx, fpm, opcache, gcov, log)
	// The master writes its own profiles into the tree: drop them, then bring the accumulated ones back.
	if _, err := removeProfiles(tree); err != nil && trainErr == nil {
		trainErr = err
	}
	back, err := moveProfiles(filepath.Join(gcov, tree), tree)
	if err != nil && trainErr == nil {
		trainErr = err
	}
	fmt.Fprintf(log, "live: %d profiles back in the tree\n", back)
	return trainErr
}

func (t *LiveTrainer) serve(ctx context.Context, fpm, opcache, gcov string, log io.Writer) error {
	cfg := t.App
	cfg.PHPFPM, cfg.NoNginx = fpm, true
	cfg.Pools = []stack.Pool{{Name: "train", Listen: stack.ListenUnix, PM: "static", MaxChildren: 2,
		Extra: []string{"env[GCOV_PREFIX] = " + gcov}}}
	cfg.Defines = FPMDefines(opcache)
	s, err := stack.Start(ctx, cfg)
	if err != nil {
		return fmt.Errorf("live training: the instrumented php-fpm: %w", err)
	}
	ep, _ := s.Pool("train")
	target, err := load.ParseTarget(ep.URL(s.Script()))
	if err != nil {
		s.Stop(context.Background())
		return err
	}
	var mix []load.MixItem
	for _, u := range t.CGI.URLs {
		mix = append(mix, load.MixItem{URI: u, Weight: 1})
	}
	d := t.Duration
	if d <= 0 {
		d = 20 * time.Second
	}
	res, err := load.Run(ctx, load.Options{Target: target, Request: load.Request{Method: "GET"}, Connections: 2,
		Duration: d, Timeout: 30 * time.Second, Mix: mix, ExpectStatus: []int{200, 404}})
	// SIGQUIT: the workers finish and write their profiles.
	stopErr := s.Stop(context.Background())
	if err != nil {
		return fmt.Errorf("live training load: %w", err)
	}
	fmt.Fprintf(log, "live: %d requests through php-fpm, %d errors\n", res.Requests, res.Errors)
	if res.Errors > 0 {
		return fmt.Errorf("live training: the app answered %d of %d requests with errors (%v): fix them before training", res.Errors, res.Requests, res.ErrorsByClass)
	}
	return stopErr
}

// mirrorDirs makes every directory of the tree under dst, writable by the workers' user, with the path to dst
// traversable: libgcov writes each object's profile at GCOV_PREFIX + the object's absolute path.
func mirrorDirs(tree, dst string) error {
	// The path down to dst: traversable (0755 under the umask), written by nobody but us.
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	return filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(tree, p)
		to := filepath.Join(dst, rel)
		if err := os.MkdirAll(to, 0o777); err != nil {
			return err
		}
		return os.Chmod(to, 0o777)
	})
}

// moveProfiles moves every .gcda under src to the same relative path under dst, writable by the workers' user.
func moveProfiles(src, dst string) (int, error) {
	n := 0
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".gcda") {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		if err := os.Rename(p, to); err != nil {
			return err
		}
		n++
		return os.Chmod(to, 0o666)
	})
	if os.IsNotExist(err) {
		return n, nil
	}
	return n, err
}

func removeProfiles(tree string) (int, error) {
	n := 0
	err := filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".gcda") {
			return err
		}
		n++
		return os.Remove(p)
	})
	return n, err
}
