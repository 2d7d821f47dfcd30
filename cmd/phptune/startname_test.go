package main

import (
	"testing"

	"github.com/phptune/phptune/internal/knob"
)

// TestStartName: the headline calls the starting point Debian's defaults only while it is; a pin or an --ini
// setting makes it the user's starting point, files the user's configuration.
func TestStartName(t *testing.T) {
	pinned := knob.Debian()
	if err := knob.MaxChildren().Set(&pinned, "2"); err != nil {
		t.Fatal(err)
	}
	withINI, err := baseConfig("", "", "", "", []string{"memory_limit=256M"}, map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	other := knob.Debian()
	other.PHPFPM = "/usr/sbin/php-fpm8.2"
	for _, c := range []struct {
		files bool
		base  knob.Config
		want  string
	}{
		{false, knob.Debian(), "Debian's defaults"},
		{false, other, "Debian's defaults"},
		{false, pinned, "your starting point"},
		{false, withINI, "your starting point"},
		{true, knob.Debian(), "your configuration"},
	} {
		if got := startName(c.files, c.base); got != c.want {
			t.Errorf("startName(%v, %s) = %q, want %q", c.files, c.base, got, c.want)
		}
	}
}
