package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/phptune/phptune/internal/apply"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/suggest"
)

// siteFile is the nginx site the plan changes: --from-site's, else the one nginx's own configuration (nginx -T)
// serves docroot from, else Debian's default site when sites-enabled has it (a server that serves through it);
// none otherwise.
func siteFile(fromSite, docroot string) (apply.File, error) {
	path := fromSite
	if path == "" {
		path = servingSite(docroot)
	}
	if path == "" {
		if _, err := os.Stat("/etc/nginx/sites-enabled/default"); err != nil {
			return apply.File{}, nil
		}
		path = apply.DebianSite
	}
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		return apply.File{Path: path, Text: string(b)}, nil
	case fromSite == "":
		return apply.File{}, nil
	}
	return apply.File{}, exitcode.UsageErrorf("--from-site %s: %v%s: give the nginx site that serves the app", fromSite,
		errorText(err), nearbyFile(fromSite))
}

// servingSite is the file of the host's nginx configuration with a server whose root is docroot, symlinks
// resolved (sites-enabled links to sites-available, which is the file to change); "" when nginx cannot say.
func servingSite(docroot string) string {
	if docroot == "" {
		return ""
	}
	abs, err := filepath.Abs(docroot)
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "nginx", "-T").Output()
	if err != nil {
		return ""
	}
	path := apply.SiteServing(string(out), abs)
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	return path
}

// errorText is an error without the path os puts in front of it.
func errorText(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// nearbyFile suggests the files of path's directory whose names are near path's, for a typo.
func nearbyFile(path string) string {
	dir := filepath.Dir(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	near := suggest.Nearest(filepath.Base(path), names)
	if len(near) == 0 {
		return ""
	}
	for i, n := range near {
		near[i] = filepath.Join(dir, n)
	}
	return " (did you mean " + suggest.Or(near) + "?)"
}
