// Package textline holds the one helper that error messages and reports share for a program's output: its
// first line, for a message that must stay one line long.
package textline

import "strings"

// First is s up to its first newline (all of s when it has none), untrimmed: callers that want leading blank
// lines skipped trim s first.
func First(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
