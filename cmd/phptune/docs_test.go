package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/cli"
	"github.com/phptune/phptune/internal/exitcode"
)

// The README is for a PHP operator who has never seen phptune: short, and free of the lab notebook (run ids, commit
// hashes, paths of the machine the runs were made on), which lives in docs/measurements.md and docs/engine.md.

const repoRoot = "../.."

const readmeMaxLines = 250

var (
	// run ids as the notebook names them: ra40, ci19.
	runID = regexp.MustCompile(`\b(ra|ci)[0-9]+\b`)
	// a commit hash: 7 to 40 hex digits with a digit and a letter among them, so that neither a word made of a-f
	// ("defaced") nor a number (16229) is taken for one.
	hexWord = regexp.MustCompile(`\b[0-9a-f]{7,40}\b`)
	// a path of one machine: its home directories and work tree, or a run's private directory. Debian's own paths
	// (/etc/php/8.2/..., /run/php/...) are what the reader has too.
	machinePath = regexp.MustCompile(`(^|[^A-Za-z0-9_.~-])/(work|root|home)/|/tmp/phptune-[0-9]`)
	// a markdown link or image: [text](target) or ![alt](target).
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
)

func readmeLines(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(data), "\n"), "\n")
}

func isCommitHash(w string) bool {
	return strings.ContainsAny(w, "0123456789") && strings.ContainsAny(w, "abcdef")
}

func TestReadmeIsForUsers(t *testing.T) {
	lines := readmeLines(t)
	if len(lines) > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move reference to docs/", len(lines), readmeMaxLines)
	}
	fence := false
	for i, l := range lines {
		n := i + 1
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
			continue
		}
		if fence && len(l) > cli.Width {
			t.Errorf("README.md:%d: a code line of %d columns, more than %d", n, len(l), cli.Width)
		}
		if m := runID.FindString(l); m != "" {
			t.Errorf("README.md:%d: run id %q (runs belong in docs/measurements.md): %s", n, m, l)
		}
		for _, w := range hexWord.FindAllString(l, -1) {
			if isCommitHash(w) {
				t.Errorf("README.md:%d: what reads as a commit hash, %q: %s", n, w, l)
			}
		}
		if m := machinePath.FindString(l); m != "" {
			t.Errorf("README.md:%d: a path of one machine, %q: %s", n, strings.TrimSpace(m), l)
		}
	}
}

// The patterns catch what they are for, and not the words and figures a README has.
func TestReadmeCheckPatterns(t *testing.T) {
	for _, c := range []struct {
		line string
		bad  bool
	}{
		{"run ra40 on WordPress", true},
		{"as ci19 showed", true},
		{"at 7f03e4f, the five presets", true},
		{"cp /work/runs/dm3d/php.ini /etc/php/8.2/fpm/conf.d/99-phptune.ini", true},
		{"cannot enter /root/ as www-data", true},
		{"phptune check /tmp/phptune-1385358463/run/php-fpm.conf", true},
		{"a defaced page, a decade of 16229 scripts, 10651 children, 0x7ff", false},
		{"cp OUT/php.ini /etc/php/8.2/fpm/conf.d/99-phptune.ini; ~/.cache/phptune/builds", false},
		{"[docs/tune.md](docs/tune.md#applying-the-result), the rac2 and circa 2026", false},
	} {
		bad := runID.MatchString(c.line) || machinePath.MatchString(c.line)
		for _, w := range hexWord.FindAllString(c.line, -1) {
			bad = bad || isCommitHash(w)
		}
		if bad != c.bad {
			t.Errorf("%q: flagged %v, want %v", c.line, bad, c.bad)
		}
	}
}

// githubSlug is the anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens.
func githubSlug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// anchors are the headings' anchors of a markdown file (outside code blocks).
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	fence := false
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
			continue
		}
		if !fence && strings.HasPrefix(l, "#") {
			out[githubSlug(strings.TrimSpace(strings.TrimLeft(l, "#")))] = true
		}
	}
	return out
}

// Every relative link of the README and the docs it points to resolves: the file exists and, for FILE.md#anchor,
// a heading of that file has the anchor.
func TestReadmeAndDocsLinksResolve(t *testing.T) {
	files := []string{filepath.Join(repoRoot, "README.md")}
	docs, _ := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	files = append(files, docs...)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repoRoot, f)
		for _, m := range mdLink.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			file := f
			if path != "" {
				file = filepath.Join(filepath.Dir(f), path)
				if _, err := os.Stat(file); err != nil {
					t.Errorf("%s: link %q: no such file", rel, target)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(file, ".md") && !anchors(t, file)[anchor] {
				t.Errorf("%s: link %q: no heading with that anchor", rel, target)
			}
		}
	}
}

// LEARN MORE names files that exist: docs/NAME.md and README.md, as the source tree and the Debian package hold them.
func TestHelpLearnMoreNamesFilesThatExist(t *testing.T) {
	named := regexp.MustCompile(`(?:docs/[A-Za-z0-9_-]+|README)\.md`)
	for _, c := range commands(newRoot(quiet())) {
		where := cli.LearnMoreOf(c)
		for _, p := range named.FindAllString(where, -1) {
			if _, err := os.Stat(filepath.Join(repoRoot, p)); err != nil {
				t.Errorf("%s --help points to %s, which does not exist", c.CommandPath(), p)
			}
		}
		if strings.Contains(where, `README.md "`) {
			for _, sec := range regexp.MustCompile(`README\.md "([^"]+)"`).FindAllStringSubmatch(where, -1) {
				if !anchors(t, filepath.Join(repoRoot, "README.md"))[githubSlug(sec[1])] {
					t.Errorf("%s --help points to README.md %q, which has no such section", c.CommandPath(), sec[1])
				}
			}
		}
	}
}

// The exit codes the README lists are the ones internal/exitcode defines.
func TestReadmeListsTheExitCodes(t *testing.T) {
	text := strings.Join(readmeLines(t), "\n")
	i := strings.Index(text, "## Exit codes")
	if i < 0 {
		t.Fatal(`README.md has no "## Exit codes" section`)
	}
	sec := text[i+len("## Exit codes"):]
	if j := strings.Index(sec, "\n## "); j >= 0 {
		sec = sec[:j]
	}
	for _, code := range []string{
		fmt.Sprintf("%d ok", exitcode.OK), fmt.Sprintf("%d the run failed", exitcode.Failed),
		fmt.Sprintf("%d bad usage", exitcode.Usage), fmt.Sprintf("%d a threshold", exitcode.Threshold),
		fmt.Sprintf("%d interrupted", exitcode.Interrupted), fmt.Sprintf("%d `gate` could not decide", exitcode.Undecided),
	} {
		if !strings.Contains(strings.Join(strings.Fields(sec), " "), code) {
			t.Errorf("README.md's exit codes do not say %q", code)
		}
	}
}
