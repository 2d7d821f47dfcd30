package workload

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/exitcode"
)

func TestLookupUnknownListsTheKnown(t *testing.T) {
	_, err := Lookup("joomla")
	if err == nil || exitcode.Of(err) != exitcode.Usage {
		t.Fatalf("Lookup(joomla) = %v, want a usage error", err)
	}
	for _, n := range Names() {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not list %s", err, n)
		}
	}
	for _, p := range Presets() {
		if _, err := Compile(p.URLs); err != nil || len(p.URLs) == 0 {
			t.Errorf("preset %s: URLs %v: %v", p.Name, p.URLs, err)
		}
	}
}

// A preset with a provisioning step the test controls, and no packages to install.
func fakePreset(step func(ctx context.Context, p *Prep) error) *Preset {
	return &Preset{Name: "fake", Front: "index.php", Revision: 3, URLs: []URL{{Path: "/", Weight: 1, Marker: "ok"}},
		provision: step}
}

func TestPrepareFailedStepLeavesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fake")
	p := fakePreset(func(ctx context.Context, p *Prep) error {
		if err := writeFile(filepath.Join(p.Docroot(), "index.php"), []byte("<?php echo 'ok';"), 0o644); err != nil {
			return err
		}
		return errors.New("seeding the content: no such table")
	})
	_, _, err := p.Prepare(context.Background(), dir, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "prepare fake: seeding the content") {
		t.Fatalf("Prepare = %v, want the failing step named", err)
	}
	for _, d := range []string{dir, dir + ".partial"} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s left behind after a failed prepare", d)
		}
	}
	if ok, _ := p.Status(dir); ok {
		t.Error("a failed prepare counts as prepared")
	}
}

func TestPrepareTwiceIsHarmless(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fake")
	runs := 0
	p := fakePreset(func(ctx context.Context, p *Prep) error {
		runs++
		return writeFile(filepath.Join(p.Docroot(), "index.php"), []byte("<?php echo 'ok';"), 0o644)
	})
	w, already, err := p.Prepare(context.Background(), dir, io.Discard)
	if err != nil || already {
		t.Fatalf("first Prepare = %v, already %v", err, already)
	}
	if w.Docroot() != filepath.Join(dir, "docroot") || w.Manifest.Front != "index.php" {
		t.Fatalf("prepared %+v", w)
	}
	if _, already, err = p.Prepare(context.Background(), dir, io.Discard); err != nil || !already || runs != 1 {
		t.Fatalf("second Prepare = %v, already %v, provisioned %d times", err, already, runs)
	}
	// A new revision of the preset redoes an older preparation.
	p.Revision++
	if _, already, err = p.Prepare(context.Background(), dir, io.Discard); err != nil || already || runs != 2 {
		t.Fatalf("Prepare after a revision = %v, already %v, provisioned %d times", err, already, runs)
	}
	// A directory that is not ours is never replaced.
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o644)
	if _, _, err := p.Prepare(context.Background(), other, io.Discard); err == nil || exitcode.Of(err) != exitcode.Usage {
		t.Fatalf("Prepare into a foreign dir = %v, want a usage error", err)
	}
	if data, _ := os.ReadFile(filepath.Join(other, "notes.txt")); string(data) != "mine" {
		t.Fatal("Prepare touched a directory that was not its own")
	}
}

func TestOpenUnprepared(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	p, err := Lookup("dokuwiki")
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Open("")
	if err == nil || exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "phptune workload prepare dokuwiki") {
		t.Fatalf("Open unprepared = %v, want a usage error that says how to prepare", err)
	}
}

func TestPrepareNeverReplacesAnotherPreset(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	a := fakePreset(func(ctx context.Context, p *Prep) error {
		return writeFile(filepath.Join(p.Docroot(), "index.php"), []byte("<?php echo 'ok';"), 0o644)
	})
	if _, _, err := a.Prepare(context.Background(), dir, io.Discard); err != nil {
		t.Fatal(err)
	}
	b := fakePreset(a.provision)
	b.Name = "other"
	if _, _, err := b.Prepare(context.Background(), dir, io.Discard); err == nil || exitcode.Of(err) != exitcode.Usage {
		t.Fatalf("preparing another preset over a prepared one = %v, want a usage error", err)
	}
	if m, err := ReadManifest(dir); err != nil || m.Name != "fake" {
		t.Fatalf("the prepared workload was replaced: %v %v", m, err)
	}
}

// TestList: workload list's rows are the presets in order, each with what it needs and its URLs, and whether it
// is prepared as Status says.
func TestList(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir()) // nothing prepared
	rows, presets := List(), Presets()
	if len(rows) != len(presets) {
		t.Fatalf("%d rows for %d presets", len(rows), len(presets))
	}
	for i, r := range rows {
		p := presets[i]
		ok, where := p.Status("")
		if r.Name != p.Name || r.Summary != p.Summary || len(r.URLs) != len(p.URLs) || r.Prepared != ok || r.Where != where ||
			strings.Join(r.Packages, ",") != strings.Join(p.Packages, ",") || strings.Join(r.Services, ",") != strings.Join(p.Services, ",") {
			t.Errorf("row %+v does not show preset %s", r, p.Name)
		}
	}
}
