package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/tune"
)

// TestRaceBuilds: a build joins the knob php after the installed php-fpm, which the run starts from; with
// --php-fpm binaries given, after those.
func TestRaceBuilds(t *testing.T) {
	installed, err := stack.FindPHPFPM("")
	if err != nil {
		t.Fatalf("%v (apt-get install php8.2-fpm)", err)
	}
	o := tune.Options{Knobs: knob.All("", nil)}
	b := []tune.Build{{Variant: "pgo", PHPFPM: "/cache/pgo/sbin/php-fpm"}}
	if err := raceBuilds(&o, b); err != nil {
		t.Fatal(err)
	}
	k := o.Knobs[slices.IndexFunc(o.Knobs, func(k knob.Knob) bool { return k.Name == "php" })]
	if got := k.Candidates(o.Base); !slices.Equal(got, []string{installed, b[0].PHPFPM}) || o.Base.PHPFPM != installed {
		t.Errorf("candidates %v, start %q", got, o.Base.PHPFPM)
	}
	if why := k.Skip(knob.Facts{}, o.Base); why != "" {
		t.Errorf("the knob php is skipped: %s", why)
	}
	// --only opcache left php out: the build brings it back; given binaries stay first.
	o = tune.Options{Knobs: []knob.Knob{knob.Opcache()}}
	o.Knobs = append(o.Knobs, knob.Binary([]string{"/a/php-fpm", "/b/php-fpm"}))
	if err := raceBuilds(&o, b); err != nil {
		t.Fatal(err)
	}
	if got := o.Knobs[1].Candidates(o.Base); !slices.Equal(got, []string{"/a/php-fpm", "/b/php-fpm", b[0].PHPFPM}) || o.Base.PHPFPM != "/a/php-fpm" {
		t.Errorf("with binaries: candidates %v, start %q", got, o.Base.PHPFPM)
	}
	if got := trainingOf([]load.MixItem{{URI: "/a"}, {URI: "/b"}, {URI: "/a"}}); !slices.Equal(got, []string{"/a", "/b"}) {
		t.Errorf("training URIs %v", got)
	}
}

// TestTuneBuildBadInput: an unknown variant, or --skip php beside --build, is refused before anything runs.
func TestTuneBuildBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--build", "pgo+o3"}, "--build pgo+o3: want pgo"},
		{[]string{"--build", "pgo", "--skip", "php"}, "--build and --skip php"},
	} {
		r := phptune(t, append([]string{"tune", "--budget", "1m"}, c.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", c.args, r.code, r.stderr, c.want)
		}
	}
}
