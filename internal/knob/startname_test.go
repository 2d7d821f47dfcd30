package knob

import "testing"

// TestStartName: the headline calls the starting point Debian's defaults only while it is; a pin or an --ini
// setting makes it the user's starting point, files the user's configuration.
func TestStartName(t *testing.T) {
	pinned := Debian()
	if err := MaxChildren().Set(&pinned, "2"); err != nil {
		t.Fatal(err)
	}
	withINI, err := Start("", "", "", "", []string{"memory_limit=256M"}, map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	other := Debian()
	other.PHPFPM = "/usr/sbin/php-fpm8.2"
	for _, c := range []struct {
		files bool
		base  Config
		want  string
	}{
		{false, Debian(), "Debian's defaults"},
		{false, other, "Debian's defaults"},
		{false, pinned, "your starting point"},
		{false, withINI, "your starting point"},
		{true, Debian(), "your configuration"},
	} {
		if got := StartName(c.files, c.base); got != c.want {
			t.Errorf("StartName(%v, %s) = %q, want %q", c.files, c.base, got, c.want)
		}
	}
}
