package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/textline"
)

// gateApp is an app whose pages burn a fixed number of loop iterations: index.php fast ones, slow.php slowLoops.
func gateApp(t *testing.T, slowLoops int) string {
	t.Helper()
	burn := `<?php function burn($n) { $x = 0; for ($i = 0; $i < $n; $i++) { $x += $i % 7; } return $x; } `
	return writeApp(t, map[string]string{
		"index.php": burn + `echo "page ok ", burn(60000), "\n";`,
		"slow.php":  burn + fmt.Sprintf(`echo "page ok ", burn(%d), "\n";`, slowLoops),
	})
}

// gateResult reads a gate run's result.json.
type gateResult struct {
	Outcome     string `json:"outcome"`
	Partial     bool   `json:"partial"`
	Rounds      int    `json:"rounds"`
	Comparisons []struct {
		Name    string  `json:"name"`
		Verdict string  `json:"verdict"`
		Gate    string  `json:"gate"`
		Change  float64 `json:"change"`
		Rounds  int     `json:"rounds"`
	} `json:"comparisons"`
}

func readGate(t *testing.T, out string) gateResult {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r gateResult
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// A version against a copy of itself is never called worse: it passes, or the budget leaves it undecided.
func TestGateAVersionAgainstItsCopy(t *testing.T) {
	old := gateApp(t, 200000)
	cp := t.TempDir()
	if err := exec.Command("cp", "-a", old+"/.", cp).Run(); err != nil {
		t.Fatal(err)
	}
	out, md := filepath.Join(t.TempDir(), "out"), filepath.Join(t.TempDir(), "summary.md")
	r := phptune(t, "gate", old, cp, "--url", "/", "--url", "/slow.php", "--expect-body", "page ok", "--budget", "25s",
		"--out", out, "--markdown", md)
	if r.code != 0 && r.code != 4 {
		t.Fatalf("exit %d, want 0 or 4; stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	res := readGate(t, out)
	if res.Outcome == "worse" || len(res.Comparisons) != 3 || res.Rounds < 2 {
		t.Fatalf("outcome %s, %d comparisons, %d rounds; want not worse, 3 (the mix and 2 URLs), 2 rounds or more",
			res.Outcome, len(res.Comparisons), res.Rounds)
	}
	for _, c := range res.Comparisons {
		if c.Gate == "worse" || c.Verdict == "worse" {
			t.Errorf("%s called worse against its own copy: %+v", c.Name, c)
		}
	}
	text, err := os.ReadFile(md)
	if err != nil || !strings.HasPrefix(string(text), "### phptune gate: ") || !strings.Contains(string(text), "`GET /slow.php`") {
		t.Errorf("--markdown: %v\n%s", err, text)
	}
	t.Logf("stdout:\n%s", r.stdout)
}

// A route that burns twice the CPU in NEW is called worse, by name, in the exit code, the annotations and the
// JUnit XML.
func TestGateCallsASlowerRouteWorse(t *testing.T) {
	old, slower := gateApp(t, 200000), gateApp(t, 400000)
	out, junit := filepath.Join(t.TempDir(), "out"), filepath.Join(t.TempDir(), "gate.xml")
	r := phptune(t, "gate", old, slower, "--url", "/", "--url", "/slow.php", "--budget", "40s", "--out", out,
		"--junit", junit, "--annotations")
	if r.code != 3 {
		t.Fatalf("exit %d, want 3; stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(textline.Last(r.stderr), "NEW is worse than OLD: ") || !strings.Contains(textline.Last(r.stderr), "GET /slow.php (+") {
		t.Errorf("the error line %q does not name GET /slow.php", textline.Last(r.stderr))
	}
	if !strings.Contains(r.stdout, "\n::error title=phptune gate%3A GET /slow.php is slower::NEW costs +") {
		t.Errorf("no annotation for GET /slow.php; stdout:\n%s", r.stdout)
	}
	res := readGate(t, out)
	for _, c := range res.Comparisons {
		if c.Name == "GET /slow.php" && (c.Gate != "worse" || c.Change < 0.5) {
			t.Errorf("GET /slow.php: %+v, want worse by about +100%%", c)
		}
		if c.Name == "GET /" && c.Gate == "worse" {
			t.Errorf("GET /, the same code in both, called worse: %+v", c)
		}
	}
	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(x), `<testcase name="GET /slow.php"`)
	if i < 0 || !strings.Contains(strings.SplitN(string(x)[i:], "</testcase>", 2)[0], "<failure ") {
		t.Errorf("the JUnit XML does not fail GET /slow.php:\n%s", x)
	}
	t.Logf("stdout:\n%s", r.stdout)
}

// A page that fails in NEW is an error of the run (exit 1), named on one line, never a fast page; from --git's
// revisions too, whose worktrees are gone afterwards.
func TestGateABrokenPageIsAnError(t *testing.T) {
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.org"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	app := gateApp(t, 100000)
	os.MkdirAll(filepath.Join(repo, "public"), 0o755)
	for _, f := range []string{"index.php", "slow.php"} {
		data, _ := os.ReadFile(filepath.Join(app, f))
		os.WriteFile(filepath.Join(repo, "public", f), data, 0o644)
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "good")
	os.WriteFile(filepath.Join(repo, "public", "slow.php"), []byte(`<?php no_such_function(); echo "page ok";`), 0o644)
	git("commit", "-q", "-a", "-m", "broken")
	before := privDirs()
	r := phptune(t, "gate", "HEAD~1", "HEAD", "--git", repo, "--docroot", "public", "--url", "/", "--url", "/slow.php",
		"--budget", "20s", "--out", filepath.Join(t.TempDir(), "out"))
	if r.code != 1 || !strings.Contains(textline.Last(r.stderr), "GET /slow.php fails in NEW") {
		t.Fatalf("exit %d, last line %q; want exit 1 naming GET /slow.php in NEW; stderr:\n%s", r.code, textline.Last(r.stderr), r.stderr)
	}
	list, _ := exec.Command("git", "-C", repo, "worktree", "list").Output()
	if n := strings.Count(strings.TrimSpace(string(list)), "\n"); n != 0 {
		t.Errorf("worktrees left behind:\n%s", list)
	}
	for _, d := range leftBehind(before) {
		t.Errorf("private dir %s left behind", d)
	}
}

// Bad input stops before anything starts or is created (exit 2), on one line that says what to give.
func TestGateBadInputCreatesNothing(t *testing.T) {
	app := gateApp(t, 1000)
	repo := t.TempDir()
	if out, err := exec.Command("git", "-C", repo, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"gate", "missing-old", app, "--url", "/"}, "OLD missing-old: not a directory"},
		{[]string{"gate", app, app}, "no URL to race"},
		{[]string{"gate", app, app, "--url", "/", "--budget", "5s"}, "give at least --budget 10s"},
		{[]string{"gate", app, app, "--url", "/", "--min-effect", "0"}, "--min-effect"},
		{[]string{"gate", app, app, "--url", "/", "--docroot", "public"}, "--docroot public is the docroot inside each --git"},
		{[]string{"gate", "a", "b", "--git", app, "--url", "/"}, "not a git repository"},
		{[]string{"gate", "HEAD", "nope", "--git", repo, "--url", "/"}, `no commit "HEAD"`},
		{[]string{"gate", app, app, "--url", "/", "--budgte", "1m"}, "did you mean --budget?"},
		{[]string{"gate", app}, "missing OLD and NEW"},
		{[]string{"gate", app, app, "--url", "/", "--writable", "../etc"}, "--writable ../etc: give a path inside the docroot"},
		{[]string{"gate", app, app, "--url", "/", "--junit", "no/such/dir/x.xml"}, "its directory does not exist"},
	} {
		dir := t.TempDir()
		cmd := exec.Command(binPath(t), c.args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), c.says) || strings.Count(string(out), "\n") != 1 {
			t.Errorf("phptune %s: %v, %q; want exit 2 saying %q on one line", strings.Join(c.args, " "), err, out, c.says)
		}
		if left, _ := os.ReadDir(dir); len(left) > 0 {
			t.Errorf("phptune %s left %s in its working directory", strings.Join(c.args, " "), left[0].Name())
		}
	}
}

// Ctrl-C during the rounds stops every process, keeps the results so far (partial) and exits 130.
func TestGateInterruptedKeepsWhatItMeasured(t *testing.T) {
	app := gateApp(t, 100000)
	out := filepath.Join(t.TempDir(), "out")
	before := privDirs()
	interrupted(t, "round 2", func(se string) bool { return strings.Contains(se, "round 2:") }, 30*time.Second,
		"gate", app, app, "--url", "/", "--budget", "2m", "--out", out)
	if res := readGate(t, out); !res.Partial || res.Rounds < 1 {
		t.Errorf("result.json: partial %v, %d rounds; want partial, with the rounds so far", res.Partial, res.Rounds)
	}
	for _, d := range leftBehind(before) {
		t.Errorf("private dir %s left behind", d)
	}
}

// leftBehind are the private dirs made since before whose owner has exited: a run that ended left them. (Other
// tests and sessions on the machine make private dirs of their own meanwhile, owned by processes still running.)
// A dir whose owner's pid was reused since is missed: rare, and never a false alarm.
func leftBehind(before map[string]bool) []string {
	var out []string
	for d := range privDirs() {
		if before[d] {
			continue
		}
		// Stacks' private dirs and gate's worktrees name their owner; other dirs are other commands'.
		data, err := os.ReadFile(filepath.Join(d, "phptune.pid"))
		pid, perr := strconv.Atoi(strings.TrimSpace(string(data)))
		if err == nil && perr == nil && syscall.Kill(pid, 0) == syscall.ESRCH {
			out = append(out, d)
		}
	}
	return out
}

// A URL file's login is sent to each version, whose logged-in pages are raced with a session of its own.
func TestGateLogsInToEachVersion(t *testing.T) {
	old := writeApp(t, map[string]string{"index.php": loginApp})
	cp := writeApp(t, map[string]string{"index.php": loginApp})
	out := filepath.Join(t.TempDir(), "out")
	r := phptune(t, "gate", old, cp, "--url-file", writeURLFile(t, "secret"), "--budget", "15s", "--out", out)
	if r.code != 0 && r.code != 4 {
		t.Fatalf("exit %d, want 0 or 4; stderr:\n%s", r.code, r.stderr)
	}
	var names []string
	for _, c := range readGate(t, out).Comparisons {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, ", "); got != "mix, GET /account, POST /comment, GET /" {
		t.Errorf("comparisons %s, want the mix and the URL file's three", got)
	}
	if r := phptune(t, "gate", old, cp, "--url-file", writeURLFile(t, "wrong"), "--budget", "15s", "--out", out+"2"); r.code != 2 ||
		!strings.Contains(textline.Last(r.stderr), "login POST /login") {
		t.Errorf("a wrong password: exit %d, %q; want 2 and the failed login", r.code, textline.Last(r.stderr))
	}
}

// --preset races the preset's pages, each checked for its marker, on two copies of its app: the demo against its
// copy, never worse.
func TestGateRacesAPresetsPages(t *testing.T) {
	old, cp := servedDir(t), servedDir(t)
	for _, d := range []string{old, cp} {
		if err := os.CopyFS(d, os.DirFS("../../workloads/demo")); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	r := phptune(t, "gate", old, cp, "--preset", "demo", "--budget", "15s", "--no-latency", "--out", out)
	if r.code != 0 && r.code != 4 {
		t.Fatalf("exit %d, want 0 or 4; stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	var names []string
	for _, c := range readGate(t, out).Comparisons {
		names = append(names, c.Name)
		if c.Gate == "worse" {
			t.Errorf("%s called worse against its own copy: %+v", c.Name, c)
		}
	}
	if got := strings.Join(names, ", "); got != "mix, GET /articles, GET /articles/7, GET /api/articles, GET /remote" {
		t.Errorf("comparisons %s, want the mix and the demo's four pages", got)
	}
}
