package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The build page in a real browser: no console errors, and every chart shows each of its marks inside its box.
func TestBuildReportRendersInChromium(t *testing.T) {
	ctx := browser(t)
	r := withUnavailable(recordedBuild(t))
	path := filepath.Join(t.TempDir(), "build.html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := BuildHTML(f, r); err != nil {
		t.Fatal(err)
	}
	f.Close()
	seen, title, _ := openPage(t, ctx, path)
	if !strings.Contains(title, "PHP "+r.Source.Version) || !strings.Contains(title, r.App) {
		t.Errorf("title %q lacks the PHP version and the app", title)
	}
	checkCharts(t, "build", seen, expectedBuildMarks(r))
}
