package report

import (
	"cmp"
	"fmt"
	"io"
	"strings"

	"github.com/phptune/phptune/internal/apply"
)

// ApplyText writes how to apply a plan whose files are in dir: apply.txt says it, the terminal summary ends
// with it.
func ApplyText(w io.Writer, p *apply.Plan, dir string) { applyText(w, p, dir, "") }

func applyText(w io.Writer, p *apply.Plan, dir, indent string) {
	say := func(first, rest, text string) { writeWrapped(w, indent+first, indent+rest, text, termWidth) }
	if p.Pool != "" && p.Servers != "" && len(p.Changes)+len(p.Files) > 0 && p.Files[0].Name == apply.PoolName {
		say("", "", fmt.Sprintf("The pool [%s] as php-fpm runs it, before -> after (listening on %s, as before unless listen is below):",
			p.Pool, cmp.Or(p.Listen, "an address no file read sets")))
		for _, l := range p.Effective() {
			fmt.Fprintf(w, "%s     %s\n", indent, l)
		}
	}
	say("", "", "To apply it on a Debian server ("+p.ForServers()+"), as root:")
	for i, s := range p.Steps(dir) {
		say(fmt.Sprintf("%d. ", i+1), "   ", s.Text)
		for _, c := range s.Commands {
			writeCommand(w, indent+"     ", c)
		}
		for _, l := range s.Lines {
			fmt.Fprintf(w, "%s     %s\n", indent, l)
		}
	}
	say("", "  ", fmt.Sprintf("Or the files of steps 1 to %d at once, and to take them back (new files removed):", len(p.Files)))
	writeCommand(w, indent+"     ", p.Patch(dir))
	writeCommand(w, indent+"     ", p.Undo(dir))
	for _, n := range p.Notes {
		say("", "  ", "Note: "+n+".")
	}
	say("", "  ", fmt.Sprintf("%s has each file's unified diff against the starting configuration.", apply.DiffName))
}

// writeCommand writes a command to paste: on one line when it fits, else broken at spaces with the shell's
// line continuation, so that it pastes whole.
func writeCommand(w io.Writer, indent, cmd string) {
	line := indent
	for i, word := range strings.Fields(cmd) {
		if i > 0 && textLen(line)+1+textLen(word)+2 > termWidth {
			fmt.Fprintln(w, line+" \\")
			line = indent + "  " + word
			continue
		}
		if i > 0 {
			line += " "
		}
		line += word
	}
	fmt.Fprintln(w, line)
}
