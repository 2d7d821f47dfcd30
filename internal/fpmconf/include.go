package fpmconf

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// include reads the files a pattern matches, in glob(3)'s sorted order; a relative pattern is taken from
// php-fpm's prefix. Matching nothing is a warning, as in php-fpm; a directory the pattern must list that is
// missing is an error, as glob(3) with GLOB_ERR makes it in php-fpm.
func (r *reader) include(at Place, pattern string, depth int) error {
	hint := ""
	if !filepath.IsAbs(pattern) {
		pattern = filepath.Join(r.c.Prefix, pattern)
		hint = fmt.Sprintf(" (relative, so taken from php-fpm's prefix %s; the official Docker image's is %s)", r.c.Prefix, DockerPrefix)
	}
	matches, err := glob(pattern)
	if err != nil {
		return fmt.Errorf("%s:%d: include=%s%s: %w", at.File, at.Line, pattern, hint, err)
	}
	if len(matches) == 0 {
		r.c.Warnings = append(r.c.Warnings, fmt.Sprintf("%s:%d: nothing matches include=%s", at.File, at.Line, pattern))
	}
	for _, m := range matches {
		if err := r.file(m, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// glob is filepath.Glob without directories (php-fpm marks them and skips them), and failing where glob(3)
// with GLOB_ERR fails: the directory to list is not there.
func glob(pattern string) ([]string, error) {
	if dir := listedDir(pattern); dir != "" {
		if _, err := os.ReadDir(dir); err != nil {
			return nil, fmt.Errorf("cannot list %s, which php-fpm refuses: %w", dir, err)
		}
	}
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("bad pattern: %w", err)
	}
	files := matches[:0]
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && !st.IsDir() {
			files = append(files, m)
		}
	}
	return files, nil
}

// listedDir is the directory before the pattern's first wildcard, or "" when it has none (a plain path is
// looked at, not listed).
func listedDir(pattern string) string {
	i := strings.IndexAny(pattern, `*?[\`)
	if i < 0 {
		return ""
	}
	return filepath.Dir(pattern[:i] + "x")
}
