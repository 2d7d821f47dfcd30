package phpini

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/textline"
)

// Directives lists the ini directives php-fpm knows with the extensions it loads as phptune runs it (Baseline's
// php.ini and conf.d): a name outside the list sets nothing. They are read from php-fpm -i, the php-fpm itself,
// since the CLI may load other extensions.
func Directives(ctx context.Context, fpmBin string) ([]string, error) {
	dir, err := os.MkdirTemp("", "phptune-ini-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	files, err := Baseline(fpmBin, dir)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	args := []string{"-i"}
	if files.INI != "" {
		args = []string{"-c", files.INI, "-i"}
	}
	cmd := exec.CommandContext(ctx, fpmBin, args...)
	cmd.Env = append(os.Environ(), files.Env()...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("list PHP's ini directives (%s -i): %v: %s", fpmBin, err, textline.First(stderr.String()))
	}
	names := parseDirectives(out)
	if len(names) == 0 {
		return nil, fmt.Errorf("list PHP's ini directives (%s -i): none in its output", fpmBin)
	}
	return names, nil
}

// parseDirectives reads the names in phpinfo()'s text tables of directives ("Directive => Local Value =>
// Master Value", one directive a line until a blank line).
func parseDirectives(info []byte) []string {
	seen := map[string]bool{}
	in := false
	sc := bufio.NewScanner(bytes.NewReader(info))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "Directive => "):
			in = true
		case strings.TrimSpace(l) == "":
			in = false
		case in:
			if name, _, ok := strings.Cut(l, " => "); ok && name != "" && !strings.Contains(name, " ") {
				seen[name] = true
			}
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
