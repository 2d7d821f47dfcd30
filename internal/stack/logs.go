package stack

import (
	"fmt"
	"os"
	"strings"

	"github.com/phptune/phptune/internal/atomicfile"
)

// writeFileAtomic writes a config or log only we read, whole or not at all.
func writeFileAtomic(path string, data []byte) error {
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// lastErrorLine is the last line of a log that reports an error, for one-line messages.
func lastErrorLine(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	last := ""
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		// Apache's syntax errors come on stderr in two lines: where, then what.
		if strings.Contains(l, "Syntax error on line") && i+1 < len(lines) {
			return strings.TrimSpace(l) + " " + strings.TrimSpace(lines[i+1])
		}
		if isErrorLine(l) {
			// php-fpm ends with "FPM initialization failed", which says nothing of why: the line before does.
			if last == "" && strings.Contains(l, "initialization failed") {
				last = strings.TrimSpace(l)
				continue
			}
			return strings.TrimSpace(l)
		}
	}
	return last
}

// isErrorLine says whether a server's log line reports an error: php-fpm's ERROR, nginx's [emerg] and the like,
// Apache's [core:emerg] and the like.
func isErrorLine(l string) bool {
	for _, mark := range []string{"ERROR", "[emerg]", "[alert]", "[crit]", ":emerg]", ":alert]", ":crit]"} {
		if strings.Contains(l, mark) {
			return true
		}
	}
	return false
}
