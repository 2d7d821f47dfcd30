package apply

import (
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
		if f.Name == NginxName {
			s.Text += fmt.Sprintf(" In the site's PHP location (Debian's: %s), these lines take the place of its fastcgi_pass:", p.SiteFile)
			s.Lines = p.Site
		}
		steps = append(steps, s)
	}
	steps = append(steps, Step{Text: "Check the files where they are, then reload (php-fpm's reload starts a new master that reads " +
		"php.ini and the pools again; requests in flight finish):", Commands: []string{strings.Join(append(p.Check, p.Reload...), " && ")}})
	return steps
}

// Patch is the command that puts every file in place at once from dir (the site's lines apart), keeping each
// file it replaces as FILE.orig.
func (p *Plan) Patch(dir string) string { return "patch -d / -p1 -b < " + filepath.Join(dir, DiffName) }

// Diffs are every file's diff, one after the other.
func (p *Plan) Diffs() string {
	var b strings.Builder
	for _, f := range p.Files {
		b.WriteString(f.Diff)
	}
	return b.String()
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
