package knob

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestChoice: --knob with values races from its first (a new name joins the knobs), one value pins it into the
// start, --skip drops a knob, --only keeps those named and any --knob, none the pool size alone.
func TestChoice(t *testing.T) {
	all := Names(All("", nil))
	for _, c := range []struct {
		ch     Choice
		knobs  string // decided, or the error
		pins   map[string]string
		asked  []string
		change func(Config) bool // true when base is as the choice sets it
	}{
		{ch: Choice{}, knobs: all, pins: map[string]string{}},
		{ch: Choice{Skip: []string{"php", "listen"}}, knobs: strings.Replace(strings.Replace(all, "php, ", "", 1), "listen, ", "", 1),
			pins: map[string]string{}},
		{ch: Choice{Only: []string{"opcache", "jit"}}, knobs: "opcache, jit", pins: map[string]string{}, asked: []string{"jit", "opcache"}},
		{ch: Choice{Only: []string{"none"}}, knobs: "", pins: map[string]string{}, asked: []string{"max_children"}},
		{ch: Choice{Knobs: []string{"opcache=off,on"}, Only: []string{"jit"}}, knobs: "opcache, jit", pins: map[string]string{},
			asked: []string{"jit", "opcache"}, change: func(c Config) bool { return c.INI["opcache.enable"] == "0" }},
		{ch: Choice{Knobs: []string{"pm=static"}}, knobs: all, pins: map[string]string{"pm": "static"},
			change: func(c Config) bool { return c.PM == "static" }},
		{ch: Choice{Knobs: []string{"memory_limit=128M,256M"}, Only: []string{"none"}}, knobs: "memory_limit", pins: map[string]string{},
			asked: []string{"max_children", "memory_limit"}},
		{ch: Choice{Knobs: []string{"opcache"}}, knobs: `--knob "opcache": want NAME=V1,V2`},
		{ch: Choice{Knobs: []string{"max_children=4,8"}}, knobs: "give one value to pin it"},
		{ch: Choice{Skip: []string{"nosuch"}}, knobs: "--skip nosuch: no such knob among php, opcache"},
		{ch: Choice{Only: []string{"nosuch"}}, knobs: "--only nosuch: no such knob"},
	} {
		base, pins, asked := Debian(), map[string]string{}, map[string]bool{}
		ks, err := c.ch.Apply(All("", nil), &base, pins, asked)
		got := Names(ks)
		if err != nil {
			got = err.Error()
		}
		if c.pins == nil {
			if err == nil || !strings.Contains(got, c.knobs) {
				t.Errorf("%+v: %q, want an error with %q", c.ch, got, c.knobs)
			}
			continue
		}
		if got != c.knobs || !maps.Equal(pins, c.pins) || !slices.Equal(slices.Sorted(maps.Keys(asked)), c.asked) ||
			(c.change != nil && !c.change(base)) {
			t.Errorf("%+v: knobs %q, pins %v, asked %v, base %s; want %q, %v, %v", c.ch, got, pins, asked, base, c.knobs, c.pins, c.asked)
		}
	}
}
