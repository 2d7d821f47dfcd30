package gate

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/stack"
)

// --markdown appends to GitHub's job summary, which other steps write too, and replaces any other file whole.
func TestMarkdownAppendsToTheJobSummary(t *testing.T) {
	dir := t.TempDir()
	summary, other := filepath.Join(dir, "summary.md"), filepath.Join(dir, "gate.md")
	t.Setenv("GITHUB_STEP_SUMMARY", summary)
	for _, p := range []string{summary, other} {
		os.WriteFile(p, []byte("before\n"), 0o644)
		for range 2 {
			if err := writeOrAppend(p, func(w io.Writer) error { _, err := io.WriteString(w, "gate\n"); return err }); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got, _ := os.ReadFile(summary); string(got) != "before\ngate\ngate\n" {
		t.Errorf("the job summary holds %q, want what was there and both summaries", got)
	}
	if got, _ := os.ReadFile(other); string(got) != "gate\n" {
		t.Errorf("another file holds %q, want the last summary alone", got)
	}
	// SaveMarkdown is the result's Markdown, so written.
	if err := sample().SaveMarkdown(other); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(other); !strings.HasPrefix(string(got), "### phptune gate: NEW is worse than OLD") {
		t.Errorf("--markdown's file holds %q, want the result's Markdown", got)
	}
}

// The run's exit: 3 when NEW is shown worse, 4 when undecided (saying a longer budget decides more), 0 when not
// worse.
func TestExit(t *testing.T) {
	r := sample()
	for outcome, want := range map[string]int{Worse: exitcode.Threshold, Undecided: exitcode.Undecided, NotWorse: exitcode.OK} {
		r.Outcome = outcome
		err := r.Exit()
		if got := exitcode.Of(err); got != want {
			t.Errorf("outcome %s: exit %d (%v), want %d", outcome, got, err, want)
		}
		if err != nil && !strings.HasPrefix(err.Error(), r.Headline()) {
			t.Errorf("outcome %s: %q does not start with the headline %q", outcome, err, r.Headline())
		}
	}
	if r.Outcome = Undecided; !strings.HasSuffix(r.Exit().Error(), ": a longer --budget decides more") {
		t.Errorf("undecided: %q does not say a longer budget decides more", r.Exit())
	}
}

// CheckOutVersions: two revisions of a repository become the versions, their docroot a subdirectory of each
// checkout, their commits recorded; a revision without the front controller is refused before any checkout.
func TestCheckOutVersions(t *testing.T) {
	repo := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	os.MkdirAll(filepath.Join(repo, "public"), 0o755)
	os.WriteFile(filepath.Join(repo, "public", "index.php"), []byte("<?php echo 1;"), 0o644)
	git("add", ".")
	git("commit", "-q", "-m", "one")
	os.WriteFile(filepath.Join(repo, "public", "index.php"), []byte("<?php echo 2;"), 0o644)
	git("commit", "-q", "-am", "two")
	one, two := git("rev-parse", "HEAD~1"), git("rev-parse", "HEAD")

	o := Options{Old: Version{Label: "OLD"}, New: Version{Label: "NEW"}}
	trees, err := o.CheckOutVersions(context.Background(), repo, "public", [2]string{"HEAD~1", "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	defer trees.Remove()
	if o.Old.Rev != one || o.New.Rev != two || o.Old.Dir != filepath.Join(trees.Paths[0], "public") ||
		o.New.Dir != filepath.Join(trees.Paths[1], "public") {
		t.Errorf("versions %+v and %+v, want %s and %s in %v's public", o.Old, o.New, one, two, trees.Paths)
	}
	if got, _ := os.ReadFile(filepath.Join(o.New.Dir, "index.php")); string(got) != "<?php echo 2;" {
		t.Errorf("NEW's index.php holds %q, want the second commit's", got)
	}

	o = Options{Stack: stack.Config{Front: "app.php"}}
	if _, err := o.CheckOutVersions(context.Background(), repo, "public", [2]string{"HEAD~1", "HEAD"}); exitcode.Of(err) != exitcode.Usage ||
		!strings.Contains(err.Error(), "has no public/app.php") || o.Old.Dir != "" {
		t.Errorf("no front controller: %v, OLD %+v; want a usage error before any checkout", err, o.Old)
	}
	if _, err := o.CheckOutVersions(context.Background(), repo, "", [2]string{"nosuchrev", "HEAD"}); exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), `no commit "nosuchrev"`) {
		t.Errorf("an unknown revision: %v, want a usage error naming it", err)
	}
}
