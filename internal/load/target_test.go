package load

import (
	"testing"

	"github.com/phptune/phptune/internal/exitcode"
)

func TestParseTarget(t *testing.T) {
	cases := []struct {
		in                                string
		proto, network, addr, uri, script string
		query                             string
	}{
		{"http://127.0.0.1:8080/a/b?x=1", HTTP, "tcp", "127.0.0.1:8080", "/a/b?x=1", "", ""},
		{"http://localhost", HTTP, "tcp", "localhost:80", "/", "", ""},
		{"fcgi://127.0.0.1:9000/var/www/index.php?a=b&c", FastCGI, "tcp", "127.0.0.1:9000", "", "/var/www/index.php", "a=b&c"},
		{"unix:/run/php/php8.2-fpm.sock:/var/www/index.php", FastCGI, "unix", "/run/php/php8.2-fpm.sock", "", "/var/www/index.php", ""},
		{"unix:/tmp/x.sock:/srv/app/index.php?page=2", FastCGI, "unix", "/tmp/x.sock", "", "/srv/app/index.php", "page=2"},
	}
	for _, c := range cases {
		tg, err := ParseTarget(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if tg.Protocol != c.proto || tg.Network != c.network || tg.Address != c.addr || tg.RequestURI != c.uri || tg.Script != c.script || tg.Query != c.query {
			t.Errorf("%s: got %+v", c.in, tg)
		}
	}
	for _, bad := range []string{"ftp://x/", "https://example.org/", "fcgi://127.0.0.1/x.php", "fcgi://127.0.0.1:9000", "fcgi://127.0.0.1:9000/dir/",
		"unix:/tmp/x.sock", "unix:/tmp/x.sock:relative.php", "127.0.0.1:8080", ""} {
		if _, err := ParseTarget(bad); exitcode.Of(err) != exitcode.Usage {
			t.Errorf("%q: err %v, want a usage error", bad, err)
		}
	}
}

func TestParseStatusesAndHeaders(t *testing.T) {
	got, err := ParseStatuses("200,301-303")
	if err != nil || len(got) != 4 || got[0] != 200 || got[3] != 303 {
		t.Fatalf("got %v %v", got, err)
	}
	for _, bad := range []string{"", "abc", "99", "300-200", "200-700"} {
		if _, err := ParseStatuses(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	h, err := ParseHeader("X-Foo:  bar baz ")
	if err != nil || h != [2]string{"X-Foo", "bar baz"} {
		t.Fatalf("got %v %v", h, err)
	}
	if _, err := ParseHeader("nocolon"); err == nil {
		t.Error("header without colon accepted")
	}
}

func TestMixSequence(t *testing.T) {
	seq := MixSequence([]MixItem{{URI: "/a", Weight: 3}, {URI: "/b", Weight: 1}, {URI: "/c", Weight: 2}})
	if len(seq) != 6 {
		t.Fatalf("seq %v", seq)
	}
	count := map[uint16]int{}
	for _, i := range seq {
		count[i]++
	}
	if count[0] != 3 || count[1] != 1 || count[2] != 2 {
		t.Errorf("counts %v", count)
	}
	// Smooth: the heaviest entry never runs three in a row across the cycle's wrap.
	for i := range seq {
		if seq[i] == 0 && seq[(i+1)%6] == 0 && seq[(i+2)%6] == 0 {
			t.Errorf("not spread: %v", seq)
		}
	}
	if got := MixSequence(nil); len(got) != 1 || got[0] != 0 {
		t.Errorf("no mix: %v", got)
	}
}
