package apply

import "testing"

// TestPHPVersion: the files name Debian's paths by this version, so an unknown one is an error, not a guess.
func TestPHPVersion(t *testing.T) {
	for _, c := range []struct{ fpm, banner, want string }{
		{"/usr/sbin/php-fpm8.2", "PHP 8.4.1 (fpm-fcgi)", "8.2"}, // Debian's name wins
		{"/var/cache/phptune/builds/pgo/sbin/php-fpm", "PHP 8.3.10 (fpm-fcgi) (built: Jan  1 2025)", "8.3"},
	} {
		if got, err := PHPVersion(c.fpm, c.banner); err != nil || got != c.want {
			t.Errorf("PHPVersion(%q, %q) = %q, %v; want %q", c.fpm, c.banner, got, err, c.want)
		}
	}
	if v, err := PHPVersion("/opt/php/sbin/php-fpm", ""); err == nil {
		t.Errorf("PHPVersion with no version anywhere = %q, want an error", v)
	}
}
