package apply

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/phptune/phptune/internal/knob"
)

// NginxSiteName is the nginx site that serves the app, changed, in the run dir.
const NginxSiteName = "nginx-site.conf"

// DebianSite is nginx's default site in Debian's package, which has no PHP location.
const DebianSite = "/etc/nginx/sites-available/default"

// ngxDirective is one directive the site's PHP location needs: its name and arguments.
type ngxDirective struct{ name, args string }

func (d ngxDirective) String() string { return d.name + " " + d.args + ";" }

// site changes the nginx site that serves the app: its PHP location passes to the plan's upstream and gets
// the directives it lacks of the recommendation's (one it sets already has its value changed, so that nothing
// is set twice, which nginx -t refuses); a site without a PHP location gets one for the app, with the front
// controller's try_files as tune's own stack serves it.
func (p *Plan) site(rec knob.Config, start Start, t Target, header []string) (Out, error) {
	site := start.Site
	stmts, err := parseNginx(site.Text)
	if err != nil {
		return Out{}, fmt.Errorf("nginx site %s: %v", site.Path, err)
	}
	want := []ngxDirective{{"fastcgi_pass", p.Upstream}}
	for _, d := range rec.Location() {
		name, args, _ := strings.Cut(d, " ")
		want = append(want, ngxDirective{name, strings.TrimSpace(args)})
	}
	out := Out{Name: NginxSiteName, Dest: site.Path, From: site.Path, before: site.Text}
	var edits []textEdit
	if locs := phpLocations(stmts); len(locs) > 0 {
		for _, l := range locs {
			edits = append(edits, p.passEdit(site.Text, l, want, cmp.Or(start.NginxDir, "/etc/nginx")))
		}
		out.What = fmt.Sprintf("the site, its PHP location passing to %s", p.Upstream)
	} else {
		servers := find(stmts, "server")
		if len(servers) == 0 {
			return Out{}, fmt.Errorf("nginx site %s has no server block: give --from-site the site that serves the app", site.Path)
		}
		edits = appLocation(site.Text, servers[0], want, t)
		out.What = "the site, with a PHP location for the app, which it had none of"
		p.Notes = append(p.Notes, fmt.Sprintf("%s had no PHP location: the plan writes one for the app into its first server "+
			"(root %s, try_files to the front controller /%s as tune served it, include snippets/fastcgi-php.conf, fastcgi_pass %s)",
			site.Path, cmp.Or(t.Docroot, "as it was"), cmp.Or(t.Front, "index.php"), p.Upstream))
	}
	out.Text = strings.Join(comment("#", header), "\n")
	if out.Text != "" {
		out.Text += "\n"
	}
	out.Text += applyEdits(site.Text, edits)
	return out, nil
}

// phpLocations are the locations that pass to FastCGI.
func phpLocations(stmts []ngxStmt) []ngxStmt {
	var out []ngxStmt
	for _, l := range find(stmts, "location") {
		if _, ok := get(l.block, "fastcgi_pass"); ok {
			out = append(out, l)
		}
	}
	return out
}

// passEdit replaces a PHP location's fastcgi_pass with the upstream and the directives it lacks, and changes
// the value of those it sets; one an included file sets is said in a note, as the site cannot change it.
func (p *Plan) passEdit(text string, loc ngxStmt, want []ngxDirective, nginxDir string) textEdit {
	pass, _ := get(loc.block, "fastcgi_pass")
	included := includedNames(loc.block, nginxDir, 0)
	indent := indentAt(text, pass.start)
	e := textEdit{at: pass.start, end: pass.end, text: want[0].String()}
	var more []textEdit
	for _, d := range want[1:] {
		s, ok := get(loc.block, d.name)
		switch {
		case ok && strings.Join(s.args, " ") != d.args:
			more = append(more, textEdit{at: s.start, end: s.end, text: d.String()})
		case ok:
		case included[d.name] != "":
			p.Notes = append(p.Notes, fmt.Sprintf("%s sets %s, which the site's PHP location includes: change it there to %s",
				included[d.name], d.name, d.String()))
		default:
			e.text += "\n" + indent + d.String()
		}
	}
	if len(more) > 0 { // the location's own lines, changed in place: one edit of the whole location
		body := applyEdits(text[loc.start:loc.end], shift(append(more, e), -loc.start))
		return textEdit{at: loc.start, end: loc.end, text: body}
	}
	return e
}

func shift(edits []textEdit, by int) []textEdit {
	for i := range edits {
		edits[i].at += by
		edits[i].end += by
	}
	return edits
}

// includedNames are the directives the files a block includes set, by name, with the file that sets each.
func includedNames(block []ngxStmt, nginxDir string, depth int) map[string]string {
	names := map[string]string{}
	if depth > 3 {
		return names
	}
	for _, inc := range block {
		if inc.name != "include" || len(inc.args) != 1 {
			continue
		}
		pattern := inc.args[0]
		if !filepath.IsAbs(pattern) {
			pattern = filepath.Join(nginxDir, pattern)
		}
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			b, err := os.ReadFile(f)
			stmts, perr := parseNginx(string(b))
			if err != nil || perr != nil {
				continue
			}
			for _, s := range stmts {
				names[s.name] = f
			}
			for k, v := range includedNames(stmts, nginxDir, depth+1) {
				names[k] = v
			}
		}
	}
	return names
}

// appLocation gives a server without a PHP location what tune's stack serves the app with: its root, the front
// controller for what is not a file (location /'s try_files), and a PHP location passing to the upstream
// through Debian's snippets/fastcgi-php.conf.
func appLocation(text string, server ngxStmt, want []ngxDirective, t Target) []textEdit {
	indent := "\t"
	if len(server.block) > 0 {
		indent = indentAt(text, server.block[0].start)
	}
	front := cmp.Or(t.Front, "index.php")
	tryFiles := ngxDirective{"try_files", "$uri /" + front + "$is_args$args"}
	var edits []textEdit
	var add strings.Builder
	if t.Docroot != "" {
		root := ngxDirective{"root", t.Docroot}
		if s, ok := get(server.block, "root"); ok {
			edits = append(edits, textEdit{at: s.start, end: s.end, text: root.String()})
		} else {
			fmt.Fprintf(&add, "%s%s\n", indent, root)
		}
	}
	i := slices.IndexFunc(server.block, func(s ngxStmt) bool { return s.name == "location" && slices.Equal(s.args, []string{"/"}) })
	switch {
	case i >= 0 && hasStmt(server.block[i].block, "try_files"):
		s, _ := get(server.block[i].block, "try_files")
		edits = append(edits, textEdit{at: s.start, end: s.end, text: tryFiles.String()})
	case i >= 0:
		edits = append(edits, textEdit{at: server.block[i].close, end: server.block[i].close, text: indent + tryFiles.String() + "\n" + indent})
	default:
		fmt.Fprintf(&add, "\n%slocation / {\n%s%s%s\n%s}\n", indent, indent, indent, tryFiles, indent)
	}
	fmt.Fprintf(&add, "\n%s# PHP, passed to php-fpm's pool (written by phptune)\n%slocation ~ \\.php$ {\n%s%sinclude snippets/fastcgi-php.conf;\n",
		indent, indent, indent, indent)
	for _, d := range want {
		fmt.Fprintf(&add, "%s%s%s\n", indent, indent, d)
	}
	fmt.Fprintf(&add, "%s}\n", indent)
	return append(edits, textEdit{at: server.close, end: server.close, text: add.String()})
}

func hasStmt(stmts []ngxStmt, name string) bool {
	_, ok := get(stmts, name)
	return ok
}

// SiteServing is the file, in nginx's configuration as `nginx -T` prints it (each file after a "# configuration
// file PATH:" line), with a server whose root is docroot: the site that serves the app ("" when none does).
func SiteServing(dump, docroot string) string {
	want := filepath.Clean(docroot)
	for _, part := range strings.Split(dump, "# configuration file ")[1:] {
		path, text, ok := strings.Cut(part, "\n")
		path = strings.TrimSuffix(strings.TrimSpace(path), ":")
		stmts, err := parseNginx(text)
		if !ok || err != nil {
			continue
		}
		for _, server := range find(stmts, "server") {
			for _, root := range find(server.block, "root") {
				if len(root.args) == 1 && filepath.Clean(strings.Trim(root.args[0], `"'`)) == want {
					return path
				}
			}
		}
	}
	return ""
}
