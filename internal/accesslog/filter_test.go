package accesslog

import (
	"strings"
	"testing"
)

// filterLog has two requests of each drop reason besides the kept ones.
var filterLog = strings.Join([]string{
	combined("POST", "/form", 200),
	combined("HEAD", "/", 200),
	combined("GET", "/missing", 404),
	combined("GET", "/old", 301),
	combined("GET", "/boom", 500),
	combined("GET", "/style.CSS", 200),
	combined("GET", "/img/a.png?v=2", 200),
	combined("GET", "/fonts/x.woff2", 200),
	combined("GET", "/healthz", 200),
	combined("GET", "/status/", 200),
	combined("GET", "/.well-known/acme-challenge/x", 200),
	combined("GET", "/Server-Status?auto", 200),
	combined("GET", "/", 200),
	combined("GET", "/cached", 304),
	combined("GET", "/sitemap.xml", 200),
	combined("GET", "/statuses", 200),
	combined("GET", "/v1.2/items", 200),
}, "\n")

func TestFilters(t *testing.T) {
	m := readString(t, filterLog, all)
	want := map[string]int{"method": 2, "status": 3, "static": 3, "health": 4}
	for k, n := range want {
		if m.Dropped[k] != n {
			t.Errorf("dropped %s = %d, want %d", k, m.Dropped[k], n)
		}
	}
	if m.Kept != 5 || len(m.Dropped) != 6 {
		t.Errorf("kept %d, dropped %v", m.Kept, m.Dropped)
	}
	kept := routeMap(m)
	for _, k := range []string{"GET /", "GET /cached", "GET /sitemap.xml", "GET /statuses", "GET /v1.2/items"} {
		if _, ok := kept[k]; !ok {
			t.Errorf("route %s missing from %v", k, kept)
		}
	}
}

func TestFiltersKeep(t *testing.T) {
	o := all
	o.Keep = Keep{Static: true, Health: true, Methods: true, Errors: true}
	m := readString(t, filterLog, o)
	if m.Kept != 17 {
		t.Errorf("kept %d of 17 with everything kept, dropped %v", m.Kept, m.Dropped)
	}
	if _, ok := routeMap(m)["POST /form"]; !ok {
		t.Errorf("no POST route: %v", routeMap(m))
	}
}

func TestParseKeep(t *testing.T) {
	for s, want := range map[string]Keep{
		"":                             {},
		"static":                       {Static: true},
		" Health , methods,":           {Health: true, Methods: true},
		"static,health,methods,errors": {true, true, true, true},
	} {
		got, err := ParseKeep(s)
		if err != nil || got != want {
			t.Errorf("ParseKeep(%q) = %+v, %v; want %+v", s, got, err, want)
		}
	}
	_, err := ParseKeep("static,images")
	if err == nil || !strings.Contains(err.Error(), `"images"`) || !strings.Contains(err.Error(), "static, health, methods, errors") {
		t.Errorf("ParseKeep(static,images) error = %v", err)
	}
}
