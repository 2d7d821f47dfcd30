package accesslog

import (
	"fmt"
	"reflect"
	"testing"
)

func TestRoutesCollapseIDs(t *testing.T) {
	uris := append(times(3, "/post/123"), "/post/456",
		"/user/550e8400-e29b-41d4-a716-446655440000/profile",
		"/user/6BA7B810-9DAD-11D1-80B4-00C04FD430C8/profile",
		"/file/5d41402abc4b2a76b9719d911017c592", "/file/deadbeef9",
		"/word/deadbeef", "/short/abc123")
	m := readString(t, logOf(uris...), all)
	got := routeMap(m)
	want := map[string][]string{
		"GET /post/{n}":            {"/post/123", "/post/456"},
		"GET /user/{uuid}/profile": {"/user/550e8400-e29b-41d4-a716-446655440000/profile", "/user/6BA7B810-9DAD-11D1-80B4-00C04FD430C8/profile"},
		"GET /file/{hex}":          {"/file/5d41402abc4b2a76b9719d911017c592", "/file/deadbeef9"},
		"GET /word/deadbeef":       {"/word/deadbeef"},
		"GET /short/abc123":        {"/short/abc123"},
	}
	if len(got) != len(want) {
		t.Errorf("routes %v", got)
	}
	for k, uris := range want {
		if r, ok := got[k]; !ok || !reflect.DeepEqual(exampleURIs(r), uris) {
			t.Errorf("route %s: %+v, want examples %v", k, r, uris)
		}
	}
	if r := got["GET /post/{n}"]; r.Count != 4 || r.Examples[0].Count != 3 {
		t.Errorf("post route %+v", r)
	}
}

func TestRoutesCollapseSlugs(t *testing.T) {
	var uris []string
	for i := range 25 {
		uris = append(uris, fmt.Sprintf("/blog/post-number-%c%c", 'a'+i%26, 'a'+i/26))
		uris = append(uris, fmt.Sprintf("/blog/post-number-%c%c/comments", 'a'+i%26, 'a'+i/26))
	}
	uris = append(uris, "/blog/7", "/about", "/contact", "/", "/index.php", "/tag/x", "/tag/y")
	m := readString(t, logOf(uris...), all)
	got := routeMap(m)
	for k, n := range map[string]int{
		"GET /blog/{*}": 25, "GET /blog/{*}/comments": 25, "GET /blog/{n}": 1,
		"GET /about": 1, "GET /contact": 1, "GET /": 1, "GET /index.php": 1, "GET /tag/x": 1, "GET /tag/y": 1,
	} {
		if got[k].Count != n {
			t.Errorf("route %s has %d requests, want %d (routes %v)", k, got[k].Count, n, got)
		}
	}
	if len(got) != 9 {
		t.Errorf("%d routes, want 9: %v", len(got), got)
	}
}

func TestRoutesTwentySlugsStay(t *testing.T) {
	var uris []string
	for i := range maxLiterals {
		uris = append(uris, fmt.Sprintf("/page-%c", 'a'+i))
	}
	if n := len(readString(t, logOf(uris...), all).Routes); n != maxLiterals {
		t.Errorf("%d routes, want %d apart", n, maxLiterals)
	}
}

func TestRoutesQueryNames(t *testing.T) {
	m := readString(t, logOf("/?p=1", "/?p=2", "/search?q=php&page=2", "/search?page=3&q=fpm&q=x",
		"/search?q=a", "/search", "/search?"), all)
	got := routeMap(m)
	for k, n := range map[string]int{"GET /?p=": 2, "GET /search?page=&q=": 2, "GET /search?q=": 1, "GET /search": 2} {
		if got[k].Count != n {
			t.Errorf("route %s has %d requests, want %d (routes %v)", k, got[k].Count, n, got)
		}
	}
}

func TestQueryNames(t *testing.T) {
	for q, want := range map[string]string{
		"": "", "&": "", "=x": "", "b=1&a=2&b=3": "?a=&b=", "a-b=1&a=2": "?a=&a-b=", "flag": "?flag=",
	} {
		if got := queryNames(q); got != want {
			t.Errorf("queryNames(%q) = %q, want %q", q, got, want)
		}
	}
}
