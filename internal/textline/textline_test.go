package textline

import (
	"os/exec"
	"testing"
)

func TestFirst(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"one", "one"},
		{"one\ntwo\n", "one"},
		{"\nsecond", ""},
		{"  spaced  \nmore", "  spaced  "},
		{"crlf\r\nnext", "crlf\r"},
	} {
		if got := First(c.in); got != c.want {
			t.Errorf("First(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestLast(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{" \n\t\n", ""},
		{"one", "one"},
		{"one\ntwo\n\n", "two"},
		{"one\n  indented  \n", "  indented"},
		{"E: Unable to locate package x\n", "E: Unable to locate package x"},
	} {
		if got := Last(c.in); got != c.want {
			t.Errorf("Last(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestQuote: a quoted word reads back as itself in sh, a single quote included; a plain word needs no quotes.
func TestQuote(t *testing.T) {
	for _, c := range []struct{ in, quoted, ifNeeded string }{
		{"/srv/app", "'/srv/app'", "/srv/app"},
		{"it's here", `'it'\''s here'`, `'it'\''s here'`},
		{"", "''", "''"},
		{"a=b,c:d", "'a=b,c:d'", "a=b,c:d"},
	} {
		if got := Quote(c.in); got != c.quoted {
			t.Errorf("Quote(%q) = %s, want %s", c.in, got, c.quoted)
		}
		if got := QuoteIfNeeded(c.in); got != c.ifNeeded {
			t.Errorf("QuoteIfNeeded(%q) = %s, want %s", c.in, got, c.ifNeeded)
		}
		out, err := exec.Command("sh", "-c", "printf %s "+Quote(c.in)).Output()
		if err != nil || string(out) != c.in {
			t.Errorf("sh read %s as %q (%v), want %q", Quote(c.in), out, err, c.in)
		}
	}
}
