package apply

import (
	"cmp"
	"fmt"
	"path/filepath"
	"strings"
)

// DiffName is the file in the run dir that holds every file's diff.
const DiffName = "changes.diff"

// Step is one step of applying a plan: what it does, then the commands to run or the lines to put in a file.
type Step struct {
	Text     string   `json:"text"`
	Commands []string `json:"commands,omitempty"`
	Lines    []string `json:"lines,omitempty"` // lines for a file the user edits, not commands
}

// Steps are the plan as a person follows it on the server, as root; dir is where the files are now.
func (p *Plan) Steps(dir string) []Step {
	var steps []Step
	for _, f := range p.Files {
		where := "replaces " + f.Dest
		if f.From == "" {
			where = "goes to " + f.Dest + ", a new file"
		}
		s := Step{Text: fmt.Sprintf("%s %s: %s.", f.Name, where, f.What), Commands: []string{"cp " + filepath.Join(dir, f.Name) + " " + f.Dest}}
		if f.Name == NginxName && len(p.Site) > 0 {
			s.Text += fmt.Sprintf(" In the site's PHP location (Debian's: %s), these lines take the place of its fastcgi_pass:", p.SiteFile)
			s.Lines = p.Site
		}
		steps = append(steps, s)
	}
	steps = append(steps, Step{Text: cmp.Or(p.Restart, nginxRestart), Commands: []string{strings.Join(append(p.Check, p.Reload...), " && ")}})
	return steps
}

// Effective is the pool as php-fpm runs it before and after the plan: each directive that changes, from -> to,
// and the file:line php-fpm takes it from; then where it listens, which stays unless the run moved it.
func (p *Plan) Effective() []string {
	var out []string
	width := 0
	for _, c := range p.Changes {
		width = max(width, len(c.Key))
	}
	for _, c := range p.Changes {
		at := c.At
		if !c.Applied {
			at += ", generated: not edited (see the note)"
		} else if c.From == "" {
			at = "added to " + at
		}
		out = append(out, fmt.Sprintf("%-*s  %s -> %s  (%s)", width, c.Key, orUnset(c.From), orUnset(c.To), at))
	}
	if len(out) == 0 {
		out = append(out, "no directive changes")
	}
	return out
}

// Patch is the command that puts every file in place at once from dir (the site's lines apart). No -b: it
// would leave an empty FILE.orig for each new file; Undo takes the diff back, new files removed.
func (p *Plan) Patch(dir string) string { return "patch -d / -p1 < " + filepath.Join(dir, DiffName) }

// Undo is the command that takes back what Patch did.
func (p *Plan) Undo(dir string) string { return "patch -d / -p1 -R < " + filepath.Join(dir, DiffName) }

// Diffs are every file's diff, one after the other.
func (p *Plan) Diffs() string {
	var b strings.Builder
	for _, f := range p.Files {
		b.WriteString(f.Diff)
	}
	return b.String()
}
