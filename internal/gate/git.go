package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/stack"
)

// Repo is a git repository whose revisions are the versions (--git).
type Repo struct {
	Dir string
}

// OpenRepo checks that git is installed and dir is a repository (exit 2 when not).
func OpenRepo(ctx context.Context, dir string) (*Repo, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, exitcode.MissingErrorf("--git needs git, which is not installed: apt-get install git")
	}
	r := &Repo{Dir: dir}
	if _, err := r.git(ctx, "rev-parse", "--git-dir"); err != nil {
		return nil, exitcode.UsageErrorf("--git %s: not a git repository (%v)", dir, err)
	}
	return r, nil
}

// Resolve is rev's commit (exit 2 when there is none).
func (r *Repo) Resolve(ctx context.Context, rev string) (string, error) {
	out, err := r.git(ctx, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil {
		return "", exitcode.UsageErrorf("--git %s: no commit %q: give a commit, a branch or a tag", r.Dir, rev)
	}
	return strings.TrimSpace(out), nil
}

// HasFront checks that commit has the front controller in the docroot's subdirectory (exit 2 when not), before
// anything is checked out.
func (r *Repo) HasFront(ctx context.Context, commit, docroot, front string) error {
	if front == "" {
		front = "index.php"
	}
	path := filepath.ToSlash(filepath.Clean(filepath.Join(docroot, front)))
	if _, err := r.git(ctx, "cat-file", "-e", commit+":"+path); err != nil {
		return exitcode.UsageErrorf("--git %s: commit %s has no %s: give the docroot with --docroot SUBDIR, the front controller with --front",
			r.Dir, shortRev(commit), path)
	}
	return nil
}

// CheckOutVersions checks out revs (OLD and NEW) of the repository in repoDir (--git) as o's versions, their
// docroot the subdirectory docroot: each revision is resolved and checked for the front controller before
// anything is checked out. The caller removes the trees.
func (o *Options) CheckOutVersions(ctx context.Context, repoDir, docroot string, revs [2]string) (*Trees, error) {
	repo, err := OpenRepo(ctx, repoDir)
	if err != nil {
		return nil, err
	}
	var commits [2]string
	for i, rev := range revs {
		if commits[i], err = repo.Resolve(ctx, rev); err != nil {
			return nil, err
		}
		if err := repo.HasFront(ctx, commits[i], docroot, o.Stack.Front); err != nil {
			return nil, err
		}
	}
	trees, err := repo.CheckOut(ctx, commits[0], commits[1])
	if err != nil {
		return nil, err
	}
	o.Old.Dir, o.Old.Rev = filepath.Join(trees.Paths[0], docroot), commits[0]
	o.New.Dir, o.New.Rev = filepath.Join(trees.Paths[1], docroot), commits[1]
	return trees, nil
}

// Trees are commits checked out as worktrees of a repository in a private directory, removed by Remove.
type Trees struct {
	repo  *Repo
	dir   string
	Paths []string // each commit's worktree, in the order given
}

// CheckOut checks out each commit as a detached worktree in a new private directory (0700: nobody else reads the
// app's files). The directory records this process as its owner, so that a later stack removes it should this
// run be killed before Remove; git worktree prune then forgets the worktree.
func (r *Repo) CheckOut(ctx context.Context, commits ...string) (*Trees, error) {
	dir, err := os.MkdirTemp("", "phptune-gate-")
	if err != nil {
		return nil, fmt.Errorf("--git: private dir: %w", err)
	}
	t := &Trees{repo: r, dir: dir}
	if err := os.WriteFile(filepath.Join(dir, stack.OwnerFile), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		t.Remove()
		return nil, fmt.Errorf("--git: private dir: %w", err)
	}
	for i, c := range commits {
		p := filepath.Join(dir, fmt.Sprintf("v%d", i+1))
		if _, err := r.git(ctx, "worktree", "add", "--detach", "--quiet", p, c); err != nil {
			t.Remove()
			return nil, fmt.Errorf("--git %s: check out %s: %w", r.Dir, c, err)
		}
		t.Paths = append(t.Paths, p)
	}
	return t, nil
}

// Remove removes the worktrees and their directory; safe on a partial checkout.
func (t *Trees) Remove() error {
	var errs []error
	for _, p := range t.Paths {
		if _, err := t.repo.git(context.Background(), "worktree", "remove", "--force", p); err != nil {
			errs = append(errs, err)
		}
	}
	if err := os.RemoveAll(t.dir); err != nil {
		errs = append(errs, err)
	}
	t.repo.git(context.Background(), "worktree", "prune") // a worktree whose directory went anyway
	return errors.Join(errs...)
}

// git runs git in the repository and returns its output, or an error with what it said on one line.
func (r *Repo) git(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", r.Dir}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		if msg := oneLine(errOut.String()); msg != "" {
			return "", errors.New(msg)
		}
		return "", err
	}
	return out.String(), nil
}
