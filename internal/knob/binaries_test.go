package knob

import (
	"slices"
	"testing"

	"github.com/phptune/phptune/internal/stack"
)

// TestWithBinaries: a build joins the knob php after the installed php-fpm, which the run starts from; with
// --php-fpm binaries given, after those.
func TestWithBinaries(t *testing.T) {
	installed, err := stack.FindPHPFPM("")
	if err != nil {
		t.Fatalf("%v (apt-get install php8.2-fpm)", err)
	}
	build := "/cache/pgo/sbin/php-fpm"
	var base Config
	knobs, err := WithBinaries(All("", nil), &base, "", []string{build})
	if err != nil {
		t.Fatal(err)
	}
	k := knobs[slices.IndexFunc(knobs, func(k Knob) bool { return k.Name == "php" })]
	if got := k.Candidates(base); !slices.Equal(got, []string{installed, build}) || base.PHPFPM != installed {
		t.Errorf("candidates %v, start %q", got, base.PHPFPM)
	}
	if why := k.Skip(Facts{}, base); why != "" {
		t.Errorf("the knob php is skipped: %s", why)
	}
	// --only opcache left php out: the build brings it back; given binaries stay first.
	base = Config{}
	knobs, err = WithBinaries([]Knob{Opcache(), Binary([]string{"/a/php-fpm", "/b/php-fpm"})}, &base, "", []string{build})
	if err != nil {
		t.Fatal(err)
	}
	if got := knobs[1].Candidates(base); !slices.Equal(got, []string{"/a/php-fpm", "/b/php-fpm", build}) || base.PHPFPM != "/a/php-fpm" {
		t.Errorf("with binaries: candidates %v, start %q", got, base.PHPFPM)
	}
}
