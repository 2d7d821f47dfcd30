package tune

import (
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestFileMap: the package comment's list of files names every file of the package and no other, so that it
// stays a map a reader can trust.
func TestFileMap(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "tune.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, n := range regexp.MustCompile(`\b[a-z0-9_]+\.go\b`).FindAllString(f.Doc.Text(), -1) {
		named[n] = true
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		if !named[n] {
			t.Errorf("tune.go's package comment does not name %s", n)
		}
		delete(named, n)
	}
	for n := range named {
		t.Errorf("tune.go's package comment names %s, which is not a file of the package", n)
	}
}
