package stack

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/exitcode"
)

// FindPHPFPM returns path when given (checked to be executable), else the newest php-fpm8.x
// found in /usr/sbin, /usr/local/sbin or PATH.
func FindPHPFPM(path string) (string, error) {
	if path != "" {
		return checkExecutable(path, "--php-fpm")
	}
	var found []string
	for _, dir := range append([]string{"/usr/sbin", "/usr/local/sbin"}, filepath.SplitList(os.Getenv("PATH"))...) {
		m, _ := filepath.Glob(filepath.Join(dir, "php-fpm*"))
		found = append(found, m...)
	}
	type cand struct {
		path         string
		major, minor int
	}
	var cands []cand
	for _, p := range found {
		base := filepath.Base(p)
		ver := strings.TrimPrefix(base, "php-fpm")
		maj, min := 0, 0
		if ver != "" {
			parts := strings.SplitN(ver, ".", 2)
			var err error
			if maj, err = strconv.Atoi(parts[0]); err != nil {
				continue
			}
			if len(parts) == 2 {
				if min, err = strconv.Atoi(parts[1]); err != nil {
					continue
				}
			}
		}
		if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			continue
		}
		cands = append(cands, cand{p, maj, min})
	}
	if len(cands) == 0 {
		return "", exitcode.MissingErrorf("php-fpm not found: install it (apt-get install php8.2-fpm) or pass --php-fpm PATH")
	}
	// Newest version first; an unversioned "php-fpm" ranks last since its version is unknown.
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].major != cands[j].major {
			return cands[i].major > cands[j].major
		}
		return cands[i].minor > cands[j].minor
	})
	return cands[0].path, nil
}

// FindNginx returns path when given, else nginx from /usr/sbin or PATH.
func FindNginx(path string) (string, error) {
	if path != "" {
		return checkExecutable(path, "--nginx")
	}
	for _, p := range []string{"/usr/sbin/nginx", "/usr/local/sbin/nginx"} {
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath("nginx"); err == nil {
		return p, nil
	}
	return "", exitcode.MissingErrorf("nginx not found: install it (apt-get install nginx-light) or pass --nginx PATH")
}

// FindApache returns path when given, else apache2 from /usr/sbin or PATH.
func FindApache(path string) (string, error) {
	if path != "" {
		return checkExecutable(path, "--apache")
	}
	for _, p := range []string{"/usr/sbin/apache2", "/usr/local/sbin/apache2"} {
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath("apache2"); err == nil {
		return p, nil
	}
	return "", exitcode.MissingErrorf("apache2 not found: install it (apt-get install apache2 libapache2-mod-php8.2) or pass --apache PATH")
}

func checkExecutable(path, flag string) (string, error) {
	p, err := exec.LookPath(path)
	if err != nil {
		return "", exitcode.UsageErrorf("%s %s: not an executable program: %v", flag, path, err)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", p, err)
	}
	return abs, nil
}
