package accesslog

import (
	"regexp"

	"github.com/phptune/phptune/internal/load"
)

// Items are the mix's URLs to load: each route's examples at their weights, sent as base with the route's own
// method, each response checked against check. They are optional: a URL from a log may fail on the app as
// served (a deleted post, a page behind a login).
func (m *Mix) Items(base load.Request, check *regexp.Regexp) []load.MixItem {
	var items []load.MixItem
	for _, r := range m.Routes {
		for _, ex := range r.Examples {
			it := load.MixItem{URI: ex.URI, Weight: ex.Weight, ExpectBody: check, Optional: true}
			if r.Method != base.Method {
				rq := base
				rq.Method = r.Method
				it.Request = &rq
			}
			items = append(items, it)
		}
	}
	return items
}

// Training are the mix's URIs to train a PHP build on, each repeated in proportion to its weight (1 to 10 times:
// a profile is shaped by what runs most).
func (m *Mix) Training() []string {
	items := m.Items(load.Request{Method: "GET"}, nil)
	top := 1
	for _, it := range items {
		top = max(top, it.Weight)
	}
	var uris []string
	for _, it := range items {
		for range max(1, (10*it.Weight+top/2)/top) {
			uris = append(uris, it.URI)
		}
	}
	return uris
}
