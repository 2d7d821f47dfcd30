package textline

import "testing"

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
