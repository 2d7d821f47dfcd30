package load

import (
	"strings"
	"testing"
)

// TestParseStatusSource: --fpm-status as a path on a FastCGI target's own pool, or a pool's address and path.
func TestParseStatusSource(t *testing.T) {
	fcgi, err := ParseTarget("fcgi://127.0.0.1:9000/srv/index.php")
	if err != nil {
		t.Fatal(err)
	}
	http, err := ParseTarget("http://127.0.0.1:8080/")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		v    string
		t    Target
		want StatusSource
	}{
		{"/status", fcgi, StatusSource{"tcp", "127.0.0.1:9000", "/status"}},
		{"fcgi://127.0.0.1:9001/st", http, StatusSource{"tcp", "127.0.0.1:9001", "/st"}},
		{"unix:/run/php.sock:/st", http, StatusSource{"unix", "/run/php.sock", "/st"}},
	} {
		if got, err := ParseStatusSource(c.v, c.t); err != nil || *got != c.want {
			t.Errorf("%s on %s: %+v, %v; want %+v", c.v, c.t.Raw, got, err, c.want)
		}
	}
	for v, want := range map[string]string{"/status": "give the pool's address too", "http://x/": "want /PATH"} {
		if _, err := ParseStatusSource(v, http); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s on an HTTP target: %v, want an error with %q", v, err, want)
		}
	}
}
