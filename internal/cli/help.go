// Package cli holds what every command of phptune shares and that is not a command: how its --help reads (and
// its man page), its arguments' and flags' errors, the status line on stderr and the results directory.
package cli

// How every command's --help reads (clig.dev; GitHub's gh), and the conventions a new command follows (see
// docs/CONTRIBUTING.md for the whole list):
//
//   - Short: one line, what the command does. Use: the arguments by name (TARGET, APP). Example: the commands a
//     person copies, most common first, each with a short # comment where it is not obvious.
//   - Long: a few short paragraphs at most (what it does, what it writes, what it needs); the method and the
//     reference go to docs/ (or the README), named by LearnMore. A line in capitals starts a section of its own.
//   - Flags: a placeholder in backquotes names the value (`DURATION`, `NAME=V1,V2`); a flag in a group (FlagGroup)
//     is listed under it. A flag name means one thing across commands, with one default (TestFlagsMeanOneThing):
//     rename rather than reuse, and keep the old spelling as a hidden alias (DeprecatedAlias).
//   - Every line within 120 columns (TestHelpReadsFirstUsageThenExamples).
//
// RenderHelp lays a command's help out in that order: the short line, USAGE, EXAMPLES, the prose, COMMANDS,
// FLAGS (by group), LEARN MORE.

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/phptune/phptune/internal/textline"
)

// Width is the most columns a line of help takes: the program's line width, as its reports and status lines.
const Width = textline.Width

// annotation keys on a command (learn) and on a flag (group).
const (
	learnKey = "phptune:learn"
	groupKey = "phptune:group"
)

// LearnMore names where a command's reference is: docs/ pages and README sections (paths in the source tree;
// the Debian package installs them under /usr/share/doc/phptune).
func LearnMore(c *cobra.Command, where string) {
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[learnKey] = where
}

// FlagGroup lists the named flags under a heading of their own in the help.
func FlagGroup(fl *pflag.FlagSet, heading string, names ...string) {
	for _, n := range names {
		f := fl.Lookup(n)
		if f == nil {
			panic("FlagGroup: no flag " + n) // a programming error, caught by every test that builds the commands
		}
		_ = fl.SetAnnotation(n, groupKey, []string{heading})
	}
}

// DeprecatedAlias keeps an old flag spelling working, hidden, with a one-line notice naming the new one.
func DeprecatedAlias(fl *pflag.FlagSet, old, name string) {
	f := fl.Lookup(name)
	fl.AddFlag(&pflag.Flag{Name: old, Usage: f.Usage, Value: f.Value, DefValue: f.DefValue, NoOptDefVal: f.NoOptDefVal})
	_ = fl.MarkDeprecated(old, "use --"+name)
}

// RenderHelp writes c's help, laid out as above.
func RenderHelp(w io.Writer, c *cobra.Command) {
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

// Heading matches a line of a Long text that starts a section: in capitals.
var Heading = regexp.MustCompile(`^[A-Z][A-Z0-9 ,()/'-]+$`)

// prose lays out a Long text: a line in capitals is a heading, a text without one gets ABOUT; paragraphs are
// indented and wrapped, lines already indented (lists, commands) are kept as written.
func prose(long string) string {
	var b strings.Builder
	lines := strings.Split(long, "\n")
	if !Heading.MatchString(lines[0]) {
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
		case Heading.MatchString(l):
			flush()
			b.WriteString(l + "\n")
		case strings.TrimSpace(l) == "":
			flush()
			b.WriteString("\n")
		case strings.HasPrefix(l, " ") && len(l)+2 <= Width:
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

// wrap breaks s into lines within Width after its leading spaces, continuation lines indented by indent
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
		if !empty && len(line)+1+len(w) > Width {
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

// LearnMoreOf is where c's reference is, as LearnMore named it.
func LearnMoreOf(c *cobra.Command) string { return c.Annotations[learnKey] }

// GroupOf is the heading f is listed under ("": none).
func GroupOf(f *pflag.Flag) string {
	if g := f.Annotations[groupKey]; len(g) > 0 {
		return g[0]
	}
	return ""
}
