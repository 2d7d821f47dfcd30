package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/phpbuild"
)

// The build page in a real browser: no console errors, and every chart shows each of its marks inside its box;
// likewise the page of a build interrupted before its verification.
func TestBuildReportRendersInChromium(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	write := func(name string, r *phpbuild.Result) string {
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := BuildHTML(f, r); err != nil {
			t.Fatal(err)
		}
		return path
	}
	r := withUnavailable(recordedBuild(t))
	seen, title, _, _ := openPage(t, ctx, write("build.html", r))
	if !strings.Contains(title, "PHP "+r.Source.Version) || !strings.Contains(title, r.App) {
		t.Errorf("title %q lacks the PHP version and the app", title)
	}
	checkCharts(t, "build", seen, expectedBuildMarks(r))

	u := unverified(recordedBuild(t))
	seen, _, _, _ = openPage(t, ctx, write("build-unverified.html", u))
	checkCharts(t, "build unverified", seen, expectedBuildMarks(u))
}
