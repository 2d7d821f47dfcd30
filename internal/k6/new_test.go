package k6

import (
	"slices"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/load"
)

// TestNew: k6 loads HTTP only, at least one instance; on other hosts over the ssh command given, found here
// otherwise.
func TestNew(t *testing.T) {
	http, err := load.ParseTarget("http://127.0.0.1:8080/")
	if err != nil {
		t.Fatal(err)
	}
	fcgi, err := load.ParseTarget("fcgi://127.0.0.1:9000/srv/index.php")
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(http, 2, []string{"h1", "h2"}, "ssh -F cfg", "k6", "")
	if err != nil || e.Instances != 2 || !slices.Equal(e.SSH, []string{"ssh", "-F", "cfg"}) || e.RemoteBinary != "k6" || e.Binary != "" {
		t.Errorf("over ssh: %+v, %v", e, err)
	}
	for _, c := range []struct {
		t         load.Target
		instances int
		ssh, want string
	}{
		{fcgi, 1, "ssh", "k6 speaks HTTP"},
		{http, 0, "ssh", "--k6-instances 0: want at least 1"},
		{http, 1, " ", "--k6-ssh: want the ssh command"},
	} {
		if _, err := New(c.t, c.instances, []string{"h"}, c.ssh, "k6", ""); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s, %d instances, ssh %q: %v, want an error with %q", c.t.Raw, c.instances, c.ssh, err, c.want)
		}
	}
}

// TestTailLastLine: a failed k6's error names the last line it wrote, trimmed, or nothing when it wrote none.
func TestTailLastLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"\n \n", ""},
		{"running\n  ERRO[0001] script exception  \n\n", ": ERRO[0001] script exception"},
	} {
		var tb tailBuffer
		tb.Write([]byte(c.in))
		if got := tb.lastLine(); got != c.want {
			t.Errorf("lastLine after %q = %q, want %q", c.in, got, c.want)
		}
	}
}
