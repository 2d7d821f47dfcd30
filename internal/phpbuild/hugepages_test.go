package phpbuild

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/measure"
)

func TestHugeCredited(t *testing.T) {
	for _, c := range []struct {
		h    measure.HugePages
		want bool
		why  string
	}{
		{measure.HugePages{TextBytes: 8 << 20}, false, "left the text in place"},
		{measure.HugePages{TextBytes: 8 << 20, TextRemapped: true}, false, "4 KiB pages"},
		{measure.HugePages{TextBytes: 8 << 20, TextRemapped: true, TextHugeBytes: 6 << 20}, true, "6144 of 8192 KiB"},
	} {
		ok, why := HugeCredited(&c.h)
		if ok != c.want || !strings.Contains(why, c.why) {
			t.Errorf("%+v: %v %q, want %v and %q", c.h, ok, why, c.want, c.why)
		}
	}
}

// TestProbeHugeCodePages runs Debian's php-cgi with opcache.huge_code_pages=1: where the system offers THP, opcache
// must copy the text to huge pages, and the probe must see it. Debian's binary is not linked for 2 MiB alignment
// (PHP's own build is), so whether its 3 MiB of text holds an aligned 2 MiB stretch to copy depends on where ASLR
// puts it: about half the starts. Twelve tries all missing would be a 1 in 4096 chance.
func TestProbeHugeCodePages(t *testing.T) {
	cgi, _ := debianCGI(t)
	oc, _ := filepath.Glob("/usr/lib/php/*/opcache.so")
	thp, _ := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	var why string
	credited := false
	for i := 0; i < 12 && !credited; i++ {
		h, err := ProbeHugeCodePages(context.Background(), cgi, oc[0])
		if err != nil {
			t.Fatal(err)
		}
		if h.TextBytes < 1<<20 {
			t.Fatalf("text %d bytes: the probe did not find php-cgi's text", h.TextBytes)
		}
		credited, why = HugeCredited(h)
	}
	if !strings.Contains(string(thp), "[never]") && len(thp) > 0 && !credited {
		t.Errorf("THP is %q but huge_code_pages was never credited in 12 starts: %s", strings.TrimSpace(string(thp)), why)
	}
	// Without the setting the text stays where the binary maps it.
	r := CGIRun{CGI: cgi, INI: INI(oc[0], false), Script: writeSmapsScript(t), Repeats: 1, CPU: -1}
	res, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := filepath.EvalSymlinks(cgi)
	off, err := measure.HugePagesFromSmaps(res.Head, exe)
	if err != nil || off.TextRemapped {
		t.Errorf("without huge_code_pages: %+v, %v; want the text in place", off, err)
	}
}

func writeSmapsScript(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "smaps.php")
	if err := os.WriteFile(p, []byte(smapsScript), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
