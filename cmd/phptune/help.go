package main

// How every command's --help reads (clig.dev; GitHub's gh), and the conventions a new command follows (see
// docs/CONTRIBUTING.md for the whole list):
//
//   - Short: one line, what the command does. Use: the arguments by name (TARGET, APP). Example: the commands a
//     person copies, most common first, each with a short # comment where it is not obvious.
//   - Long: a few short paragraphs at most (what it does, what it writes, what it needs); the method and the
//     reference go to docs/ (or the README), named by learnMore. A line in capitals starts a section of its own.
//   - Flags: a placeholder in backquotes names the value (`DURATION`, `NAME=V1,V2`); a flag in a group (flagGroup)
//     is listed under it. A flag name means one thing across commands, with one default (TestFlagsMeanOneThing):
//     rename rather than reuse, and keep the old spelling as a hidden alias (deprecatedAlias).
//   - Every line within 120 columns (TestHelpReadsFirstUsageThenExamples).
//
// renderHelp lays a command's help out in that order: the short line, USAGE, EXAMPLES, the prose, COMMANDS,
// FLAGS (by group), LEARN MORE.

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/phptune/phptune/internal/tune"
)

const helpWidth = 120

// annotation keys on a command (learn) and on a flag (group).
const (
	learnKey = "phptune:learn"
	groupKey = "phptune:group"
)

// learnMore names where a command's reference is: docs/ pages and README sections (paths in the source tree;
// the Debian package installs them under /usr/share/doc/phptune).
func learnMore(c *cobra.Command, where string) {
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[learnKey] = where
}

// flagGroup lists the named flags under a heading of their own in the help.
func flagGroup(fl *pflag.FlagSet, heading string, names ...string) {
	for _, n := range names {
		f := fl.Lookup(n)
		if f == nil {
			panic("flagGroup: no flag " + n) // a programming error, caught by every test that builds the commands
		}
		_ = fl.SetAnnotation(n, groupKey, []string{heading})
	}
}

// deprecatedAlias keeps an old flag spelling working, hidden, with a one-line notice naming the new one.
func deprecatedAlias(fl *pflag.FlagSet, old, name string) {
	f := fl.Lookup(name)
	fl.AddFlag(&pflag.Flag{Name: old, Usage: f.Usage, Value: f.Value, DefValue: f.DefValue, NoOptDefVal: f.NoOptDefVal})
	_ = fl.MarkDeprecated(old, "use --"+name)
}

func renderHelp(w io.Writer, c *cobra.Command) {
	var b strings.Builder
	if c.Short != "" {
		b.WriteString(c.Short + "\n")
	}
	b.WriteString("\nUSAGE\n")
	if c.Runnable() {
		// One line a form ("A | B" in Use), each whole: "phptune compare ...", not "compare ..." after the first.
		for i, form := range strings.Split(c.UseLine(), " | ") {
			if i > 0 && c.HasParent() && !strings.HasPrefix(form, c.Parent().CommandPath()+" ") {
				form = c.Parent().CommandPath() + " " + form
			}
			b.WriteString("  " + form + "\n")
		}
	}
	if c.HasAvailableSubCommands() {
		b.WriteString("  " + c.CommandPath() + " COMMAND [flags]\n")
	}
	if c.Example != "" {
		b.WriteString("\nEXAMPLES\n" + strings.TrimRight(c.Example, "\n") + "\n")
	}
	if long := strings.TrimSpace(c.Long); long != "" {
		b.WriteString("\n" + prose(long))
	}
	if c.HasAvailableSubCommands() {
		b.WriteString("\nCOMMANDS\n")
		width := 0
		for _, s := range c.Commands() {
			if s.IsAvailableCommand() {
				width = max(width, len(s.Name()))
			}
		}
		for _, s := range c.Commands() {
			if s.IsAvailableCommand() {
				b.WriteString(wrapAfter(fmt.Sprintf("  %-*s  ", width, s.Name()), s.Short, width+4))
			}
		}
	}
	b.WriteString(flagSections(c))
	if where := c.Annotations[learnKey]; where != "" || c.HasAvailableSubCommands() {
		b.WriteString("\nLEARN MORE\n")
		if c.HasAvailableSubCommands() {
			b.WriteString("  " + c.CommandPath() + " COMMAND --help: a command's help\n")
		}
		if where != "" {
			b.WriteString(wrap("  "+where, 2))
		}
		b.WriteString("  man " + strings.ReplaceAll(c.CommandPath(), " ", "-") + " (installed with the Debian package)\n")
	}
	io.WriteString(w, b.String())
}

var heading = regexp.MustCompile(`^[A-Z][A-Z0-9 ,()/'-]+$`)

// prose lays out a Long text: a line in capitals is a heading, a text without one gets ABOUT; paragraphs are
// indented and wrapped, lines already indented (lists, commands) are kept as written.
func prose(long string) string {
	var b strings.Builder
	lines := strings.Split(long, "\n")
	if !heading.MatchString(lines[0]) {
		b.WriteString("ABOUT\n")
	}
	var para []string
	flush := func() {
		if len(para) > 0 {
			b.WriteString(wrap("  "+strings.Join(para, " "), 2))
			para = nil
		}
	}
	for _, l := range lines {
		switch {
		case heading.MatchString(l):
			flush()
			b.WriteString(l + "\n")
		case strings.TrimSpace(l) == "":
			flush()
			b.WriteString("\n")
		case strings.HasPrefix(l, " ") && len(l)+2 <= helpWidth:
			flush()
			b.WriteString("  " + l + "\n")
		case strings.HasPrefix(l, " "):
			flush()
			b.WriteString(wrap("  "+l, 2+len(l)-len(strings.TrimLeft(l, " -"))))
		default:
			para = append(para, l)
		}
	}
	flush()
	return b.String()
}

// flagSections lists the visible flags, a group's under its heading in the order the groups first appear, the
// rest under FLAGS (OTHER FLAGS when there are groups), one column width for all.
func flagSections(c *cobra.Command) string {
	var order []string
	byGroup := map[string][]*pflag.Flag{}
	width := 0
	c.NonInheritedFlags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		g := ""
		if v := f.Annotations[groupKey]; len(v) > 0 {
			g = v[0]
		}
		if _, ok := byGroup[g]; !ok && g != "" {
			order = append(order, g)
		}
		byGroup[g] = append(byGroup[g], f)
		width = max(width, len(flagLeft(f)))
	})
	width = min(width, 34)
	var b strings.Builder
	rest := "FLAGS"
	if len(order) > 0 {
		rest = "OTHER FLAGS"
	}
	for _, g := range append(order, "") {
		fs := byGroup[g]
		if len(fs) == 0 {
			continue
		}
		if g == "" {
			g = rest
		}
		b.WriteString("\n" + g + "\n")
		for _, f := range fs {
			b.WriteString(flagLine(f, width))
		}
	}
	return b.String()
}

// flagLeft is a flag's name column: "  -c, --connections N".
func flagLeft(f *pflag.Flag) string {
	name, _ := pflag.UnquoteUsage(f)
	name = placeholder(f, name)
	s := "      --" + f.Name
	if f.Shorthand != "" {
		s = "  -" + f.Shorthand + ", --" + f.Name
	}
	if name != "" {
		s += " " + name
	}
	return s
}

// placeholder is the value's name when the usage gives none in backquotes.
func placeholder(f *pflag.Flag, name string) string {
	if strings.Contains(f.Usage, "`") || f.NoOptDefVal != "" && f.Value.Type() != "bool" {
		if f.NoOptDefVal != "" && f.Value.Type() != "bool" {
			return "[=" + name + "]"
		}
		return name
	}
	switch f.Value.Type() {
	case "bool":
		return ""
	case "duration":
		return "DURATION"
	case "int", "int64", "uint":
		return "N"
	case "float64":
		return "NUM"
	case "stringSlice", "intSlice":
		return "LIST"
	}
	return "VALUE"
}

func flagLine(f *pflag.Flag, width int) string {
	left := flagLeft(f)
	_, usage := pflag.UnquoteUsage(f)
	if d := defaultOf(f); d != "" && !strings.Contains(usage, "default") {
		usage += " (default " + d + ")"
	}
	if len(left) > width {
		return left + "\n" + wrapAfter(strings.Repeat(" ", width+2), usage, width+2)
	}
	return wrapAfter(fmt.Sprintf("%-*s  ", width, left), usage, width+2)
}

// defaultOf is a flag's default as a person writes it ("10m", not "10m0s"), or "" when it is the zero value.
func defaultOf(f *pflag.Flag) string {
	switch f.DefValue {
	case "", "0", "false", "[]", "0s":
		return ""
	}
	if f.Value.Type() == "duration" {
		if d, err := time.ParseDuration(f.DefValue); err == nil {
			return shortDuration(d)
		}
	}
	return strings.Trim(f.DefValue, "[]")
}

// shortDuration prints 10m0s as 10m and 1h0m0s as 1h.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// wrap breaks s into lines within helpWidth after its leading spaces, continuation lines indented by indent
// spaces; a word longer than the width stays whole on its own line.
func wrap(s string, indent int) string {
	lead := len(s) - len(strings.TrimLeft(s, " "))
	return wrapAfter(s[:lead], s[lead:], indent)
}

// wrapAfter is wrap of text after prefix, which is kept as it is (a flag's column).
func wrapAfter(prefix, text string, indent int) string {
	var b strings.Builder
	line := prefix
	empty := true
	for _, w := range strings.Fields(text) {
		if !empty && len(line)+1+len(w) > helpWidth {
			b.WriteString(line + "\n")
			line, empty = strings.Repeat(" ", indent), true
		}
		if !empty {
			line += " "
		}
		line += w
		empty = false
	}
	b.WriteString(line + "\n")
	return b.String()
}

// The flags several commands share say the same, with one default (TestFlagsMeanOneThing).
const (
	defaultMinEffectPct = 100 * tune.DefaultMinEffect
	minEffectUsage      = "smallest change in % that counts as better or worse; no_difference means within it"
	alphaUsage          = "error budget of the run: the chance, at most, that any verdict is wrong"
	timeoutUsage        = "per-request timeout; a request unanswered by then counts as timed out"
)
