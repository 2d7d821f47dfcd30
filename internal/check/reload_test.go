package check

import "testing"

func TestUnitIn(t *testing.T) {
	for text, want := range map[string]string{
		"0::/system.slice/php8.2-fpm.service\n": "php8.2-fpm.service",
		"12:memory:/system.slice/php8.3-fpm.service\n1:name=systemd:/system.slice/php8.3-fpm.service\n0::/\n": "php8.3-fpm.service",
		"4:memory:/process_api/1b36\n0::/\n":          "",
		"0::/user.slice/user-0.slice/session-3.scope": "",
	} {
		if got := unitIn(text); got != want {
			t.Errorf("unitIn(%q) = %q, want %q", text, got, want)
		}
	}
}
