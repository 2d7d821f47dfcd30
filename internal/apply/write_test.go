package apply

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReadStart: the start's files as given; a --from-pool or --from-site that cannot be read is the user's to
// fix, with the files of its directory whose names are near.
func TestReadStart(t *testing.T) {
	dir := t.TempDir()
	pool, ini := filepath.Join(dir, "www.conf"), filepath.Join(dir, "php.ini")
	for _, p := range []string{pool, ini} {
		if err := os.WriteFile(p, []byte("; "+filepath.Base(p)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := ReadStart("8.2", From{Pool: pool, Prefix: "/usr/local", INI: ini, Site: pool})
	if err != nil {
		t.Fatal(err)
	}
	if s.Pool.Path != pool || s.Pool.Text != "; www.conf\n" || s.INI.Path != ini || s.Prefix != "/usr/local" || s.Site.Path != pool {
		t.Errorf("start: %+v", s)
	}
	for from, want := range map[From]string{
		{Pool: filepath.Join(dir, "nosuch.conf")}: "--from-pool: open",
		{INI: filepath.Join(dir, "nosuch.ini")}:   "--from-ini: open",
		{Site: filepath.Join(dir, "www.cnf")}:     "--from-site " + filepath.Join(dir, "www.cnf") + ": no such file or directory (did you mean " + pool + "?)",
	} {
		if _, err := ReadStart("8.2", from); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want an error with %q", from, err, want)
		}
	}
}

// TestFileNames: the files written, in the order a reader takes them.
func TestFileNames(t *testing.T) {
	got := FileNames(map[string]string{ApplyName: "", DiffName: "", NginxName: "", PoolName: "", "report.html": ""})
	if want := []string{PoolName, NginxName, DiffName, ApplyName}; !slices.Equal(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
}
