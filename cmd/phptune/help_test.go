package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/phptune/phptune/internal/cli"
)

// commands walks every command under root, root included.
func commands(root *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{root}
	for _, c := range root.Commands() {
		out = append(out, commands(c)...)
	}
	return out
}

// ours says whether c is phptune's own, or described as phptune's are (cobra adds help and completion; phptune
// gives completion its help, completionHelp).
func ours(c *cobra.Command) bool {
	for p := c; p != nil; p = p.Parent() {
		if p.Name() == "help" || p.Hidden {
			return false
		}
	}
	return true
}

// helpOf is what `phptune ARGS... --help` prints.
func helpOf(t *testing.T, path []string) string {
	t.Helper()
	root := newRoot(quiet())
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs(append(path, "--help"))
	if err := root.Execute(); err != nil {
		t.Fatalf("phptune %s --help: %v", strings.Join(path, " "), err)
	}
	return out.String()
}

func TestHelpReadsFirstUsageThenExamples(t *testing.T) {
	for _, c := range commands(newRoot(quiet())) {
		path := strings.Fields(c.CommandPath())[1:]
		help := helpOf(t, path)
		lines := strings.Split(strings.TrimRight(help, "\n"), "\n")
		name := "phptune " + strings.Join(path, " ")
		for i, l := range lines {
			if len(l) > cli.Width {
				t.Errorf("%s --help, line %d is %d columns: %q", name, i+1, len(l), l)
			}
		}
		if !ours(c) {
			continue
		}
		if lines[0] != c.Short || c.Short == "" || len(lines) < 4 || lines[2] != "USAGE" {
			t.Errorf("%s --help does not start with its short line and USAGE:\n%s", name, help)
			continue
		}
		// The headings in order: USAGE, EXAMPLES, then the prose, the commands and the flags, LEARN MORE last.
		var heads []int
		for i, l := range lines {
			if l != "" && l[0] != ' ' && i > 0 {
				heads = append(heads, i)
			}
		}
		if len(heads) < 2 || lines[heads[1]] != "EXAMPLES" {
			t.Errorf("%s --help: EXAMPLES does not follow USAGE", name)
		}
		if last := lines[heads[len(heads)-1]]; last != "LEARN MORE" {
			t.Errorf("%s --help ends with %q, not LEARN MORE", name, last)
		}
		flags := len(lines)
		for _, h := range heads {
			if l := lines[h]; strings.HasSuffix(l, "FLAGS") || l == "COMMANDS" || c.LocalFlags().HasAvailableFlags() && isFlagGroup(c, l) {
				flags = min(flags, h)
			}
		}
		if prose := flags - heads[2]; len(heads) > 2 && prose > 18 {
			t.Errorf("%s --help: %d lines of prose before the flags; move the reference to docs/", name, prose)
		}
	}
}

// isFlagGroup says whether heading names one of c's flag groups.
func isFlagGroup(c *cobra.Command, heading string) bool {
	found := false
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if cli.GroupOf(f) == heading {
			found = true
		}
	})
	return found
}

// Same-named flags mean the same across commands: one type, one default. The exceptions say why.
func TestFlagsMeanOneThing(t *testing.T) {
	allowed := map[string]string{
		"php-fpm":  "tune takes it twice or more, to race the binaries",
		"requests": "bench's -n replaces the window (none by default); profile's counts the requests traced",
		"rounds":   "a build's verification round costs minutes of php-cgi: 10 at most, compare's 20",
		"for":      "serve runs until Ctrl-C unless given one; check samples for 2 minutes",
		"budget":   "gate is a CI job's step: 2 minutes, where tune's 10 decide the knobs",
	}
	type use struct{ cmd, typ, def string }
	seen := map[string][]use{}
	for _, c := range commands(newRoot(quiet())) {
		if !ours(c) {
			continue
		}
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden && f.Name != "help" {
				seen[f.Name] = append(seen[f.Name], use{c.CommandPath(), f.Value.Type(), f.DefValue})
			}
		})
	}
	for name, uses := range seen {
		if _, ok := allowed[name]; ok {
			continue
		}
		for _, u := range uses[1:] {
			if u.typ != uses[0].typ || u.def != uses[0].def {
				t.Errorf("--%s is %s (default %q) in %s but %s (default %q) in %s", name, uses[0].typ, uses[0].def, uses[0].cmd,
					u.typ, u.def, u.cmd)
			}
		}
	}
	for _, name := range []string{"warmup", "procs", "min-effect", "timeout", "repeat", "skip", "target"} {
		if len(seen[name]) == 0 {
			continue
		}
		t.Logf("--%s: %v", name, seen[name])
	}
}

// An old spelling still works, hidden, with a notice naming the new one.
// An old flag name's notice goes to stderr: on stdout it would end up in --json's output.
func TestDeprecatedNoticeOnStderr(t *testing.T) {
	var out, errOut bytes.Buffer
	root := newRoot(&streams{out: &out, err: &errOut})
	root.SetArgs([]string{"check", "tcp:127.0.0.1:1", "--status-path", "status", "--json"})
	err := root.Execute()
	if err == nil || !strings.Contains(err.Error(), `--fpm-status "status": want a path starting with /`) {
		t.Errorf("check --status-path status: %v", err)
	}
	if out.Len() != 0 || !strings.Contains(errOut.String(), "use --fpm-status") {
		t.Errorf("the notice: stdout %q, stderr %q; want it on stderr alone", out.String(), errOut.String())
	}
}

func TestDeprecatedAliasesStillWork(t *testing.T) {
	for _, c := range []struct {
		path      []string
		old, name string
		value     string
	}{
		{[]string{"bench"}, "procs", "gomaxprocs", "2"},
		{[]string{"compare"}, "repeat", "rounds", "7"},
		{[]string{"clients"}, "warmup", "warmup-revs", "50"},
		{[]string{"profile"}, "warmup", "warmup-rounds", "3"},
		{[]string{"profile"}, "skip", "without", "[syscalls]"},
		{[]string{"ingest", "k6"}, "target", "target-name", "shop"},
	} {
		root := newRoot(quiet())
		cmd, _, err := root.Find(c.path)
		if err != nil {
			t.Fatal(err)
		}
		var notice bytes.Buffer
		cmd.Flags().SetOutput(&notice)
		v := strings.Trim(c.value, "[]")
		if err := cmd.ParseFlags([]string{"--" + c.old, v}); err != nil {
			t.Fatalf("%v --%s %s: %v", c.path, c.old, v, err)
		}
		if got := cmd.Flags().Lookup(c.name).Value.String(); got != c.value {
			t.Errorf("%v --%s %s set --%s to %q", c.path, c.old, v, c.name, got)
		}
		if want := "use --" + c.name; !strings.Contains(notice.String(), want) || strings.Count(strings.TrimSpace(notice.String()), "\n") > 0 {
			t.Errorf("%v --%s: notice %q, want one line with %q", c.path, c.old, notice.String(), want)
		}
		if regexp.MustCompile(`(?m)^ +(-., )?--` + c.old + ` `).MatchString(helpOf(t, c.path)) {
			t.Errorf("%v --help still lists --%s", c.path, c.old)
		}
	}
}

// A usage error names what is missing or meant, on one line.
func TestUsageErrorsNameWhatIsMeant(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench"}, "missing TARGET"},
		{[]string{"bench", "http://a/", "http://b/"}, "takes TARGET"},
		{[]string{"report"}, "missing RESULT.json"},
		{[]string{"compare", "a.json"}, "missing two results or more"},
		{[]string{"workload", "prepare"}, "missing NAME"},
		{[]string{"tune", "a", "b"}, "takes APP"},
		{[]string{"tune", "--budgte", "1m"}, "unknown flag --budgte (did you mean --budget?"},
		{[]string{"bench", "--conections", "3", "http://a/"}, "did you mean --connections?"},
	} {
		root := newRoot(quiet())
		root.SetArgs(c.args)
		root.SetOut(&bytes.Buffer{})
		err := root.Execute()
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("phptune %s: error %v, want one line with %q", strings.Join(c.args, " "), err, c.want)
		}
		if exitCode(err) != 2 {
			t.Errorf("phptune %s: exit %d, want 2", strings.Join(c.args, " "), exitCode(err))
		}
	}
	root := newRoot(quiet())
	root.SetArgs([]string{"tuen"})
	if got := cli.UnknownCommand(root.Execute().Error()); got != `unknown command "tuen" for "phptune" (did you mean tune?)` {
		t.Errorf("unknown command: %q", got)
	}
}

// Every form in USAGE is a whole command line, "phptune compare --interleave ...", as a person copies it.
func TestUsageFormsNameTheCommand(t *testing.T) {
	for _, c := range commands(newRoot(quiet())) {
		if !ours(c) {
			continue
		}
		path := strings.Fields(c.CommandPath())[1:]
		lines := strings.Split(helpOf(t, path), "\n")
		forms := 0
		for i := 3; i < len(lines) && lines[i] != ""; i++ {
			forms++
			if !strings.HasPrefix(lines[i], "  "+c.CommandPath()) {
				t.Errorf("%s --help: the usage form %q does not start with %q", c.CommandPath(), lines[i], c.CommandPath())
			}
		}
		if c.Name() == "compare" && forms != 2 {
			t.Errorf("compare --help: %d usage forms, want its two (results, --interleave):\n%s", forms, strings.Join(lines, "\n"))
		}
	}
}
