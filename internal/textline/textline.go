// Package textline holds the helpers that error messages, reports and status lines share for a line of the
// program's output: its first line (a message that must stay one line long), the last (what a failed tool said
// at the end), a line cut to fit (Fit), and a word quoted for a command line a person copies into a shell
// (Quote, QuoteIfNeeded).
package textline

import "strings"

// First is s up to its first newline (all of s when it has none), untrimmed: callers that want leading blank
// lines skipped trim s first.
func First(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Last is the last line of s once blank space around s is trimmed: the last non-blank line, "" for a blank s.
func Last(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// Quote is s single-quoted for a POSIX shell, whatever it holds.
func Quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// QuoteIfNeeded is s as it is where a shell reads it as one plain word, else Quote(s).
func QuoteIfNeeded(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-=,:") == "" {
		return s
	}
	return Quote(s)
}
