package tune

import (
	"slices"
	"testing"

	"github.com/phptune/phptune/internal/knob"
)

// TestRaceBuilds: tune --build's binaries join the knob php after the php-fpm binaries given, and the run
// starts from the first given.
func TestRaceBuilds(t *testing.T) {
	o := Options{Knobs: []knob.Knob{knob.Opcache(), knob.Binary([]string{"/a/sbin/php-fpm"})}}
	err := o.RaceBuilds([]Build{{Variant: "pgo", PHPFPM: "/cache/pgo/sbin/php-fpm"}, {Variant: "pgo+lto", PHPFPM: "/a/sbin/php-fpm"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Knobs) != 2 || o.Knobs[1].Name != "php" {
		t.Fatalf("knobs %v, want opcache and php", o.Knobs)
	}
	want := []string{"/a/sbin/php-fpm", "/cache/pgo/sbin/php-fpm"} // a build already there is not raced twice
	if got := o.Knobs[1].Candidates(o.Base); !slices.Equal(got, want) || o.Base.PHPFPM != want[0] {
		t.Errorf("php's values %v, start %q; want %v from %q", got, o.Base.PHPFPM, want, want[0])
	}
}
