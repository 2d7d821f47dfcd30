package suggest

import (
	"reflect"
	"testing"
)

func TestNearest(t *testing.T) {
	knobs := []string{"opcache", "jit", "pm", "listen", "keepalive", "max_children", "max_requests", "backlog",
		"opcache.enable", "opcache.jit", "memory_limit", "realpath_cache_size"}
	for _, c := range []struct {
		name string
		want []string
	}{
		{"opcach", []string{"opcache", "opcache.jit", "opcache.enable"}}, // a letter missing, then typed part way (nearest first)
		{"max_chidlren", []string{"max_children"}},                       // two letters swapped
		{"Keepalive", []string{"keepalive"}},                             // case
		{"memory_limt", []string{"memory_limit"}},
		{"zzz", nil},
		{"jti", []string{"jit"}},
		{"wieght", nil},
	} {
		if got := Nearest(c.name, knobs); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Nearest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
	if got := Nearest("wieght", []string{"path", "weight", "expect"}); !reflect.DeepEqual(got, []string{"weight"}) {
		t.Errorf("Nearest(wieght) = %q", got)
	}
}

func TestPhrase(t *testing.T) {
	if got := Phrase("jti", []string{"jit", "pm"}); got != " (did you mean jit?)" {
		t.Errorf("Phrase = %q", got)
	}
	if got := Or([]string{"a", "b", "c"}); got != "a, b or c" {
		t.Errorf("Or = %q", got)
	}
}
