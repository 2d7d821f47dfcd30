package accesslog

import (
	"sort"
	"strings"

	"github.com/phptune/phptune/internal/stats"
)

// maxLiterals is how many distinct literal segments may follow one parent before they are taken for
// slugs and collapse to {*}.
const maxLiterals = 20

// hit is one concrete request (method and URI as logged) with its counts.
type hit struct {
	method, uri string
	count, seq  int // seq orders by first appearance
	timeSum     float64
	timed       int // requests with a time
}

// route is hits sharing a method and a pattern.
type route struct {
	method, pattern string
	count, seq      int
	timeSum         float64
	timed           int
	hits            []*hit
}

// meanTime is over the requests that had a time.
func (r *route) meanTime() float64 {
	if r.timed == 0 {
		return 0
	}
	return r.timeSum / float64(r.timed)
}

// totalTime is what the route costs the server: its requests at its mean time.
func (r *route) totalTime() float64 { return float64(r.count) * r.meanTime() }

// node is a path segment pattern in a trie of paths; ends are the hits whose path ends here.
type node struct {
	children map[string]*node
	ends     []*hit
}

func (n *node) child(seg string) *node {
	if n.children == nil {
		n.children = map[string]*node{}
	}
	c := n.children[seg]
	if c == nil {
		c = &node{}
		n.children[seg] = c
	}
	return c
}

// buildRoutes collapses IDs segment by segment, then slugs where a parent has many, and groups the
// hits by method, path pattern and query parameter names.
func buildRoutes(hits []*hit) []*route {
	root := &node{}
	for _, h := range hits {
		path, _, _ := strings.Cut(h.uri, "?")
		n := root
		for _, seg := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
			n = n.child(segPattern(seg))
		}
		n.ends = append(n.ends, h)
	}
	root.collapse()
	byKey := map[string]*route{}
	var out []*route
	root.walk("", func(path string, h *hit) {
		_, query, _ := strings.Cut(h.uri, "?")
		pattern := path + queryNames(query)
		key := h.method + " " + pattern
		r := byKey[key]
		if r == nil {
			r = &route{method: h.method, pattern: pattern, seq: h.seq}
			byKey[key] = r
			out = append(out, r)
		}
		r.add(h)
	})
	return out
}

func (r *route) add(h *hit) {
	r.count += h.count
	r.timeSum += h.timeSum
	r.timed += h.timed
	r.seq = min(r.seq, h.seq)
	r.hits = append(r.hits, h)
}

// walk calls fn for every hit with its path pattern.
func (n *node) walk(prefix string, fn func(path string, h *hit)) {
	for _, h := range n.ends {
		fn(prefix, h)
	}
	for seg, c := range n.children {
		c.walk(prefix+"/"+seg, fn)
	}
}

// collapse merges the literal children of a node into {*} when there are more than maxLiterals of
// them (slugs: /blog/hello-world, /blog/another-post, ...), then does the same below. A child with
// five times the median child's requests and 1% of the node's is a page of its own (/cart beside
// the products), never a slug.
func (n *node) collapse() {
	total := n.requests()
	counts := map[string]int{}
	var all []float64
	for seg, c := range n.children {
		if collapsible(seg) {
			counts[seg] = c.requests()
			all = append(all, float64(counts[seg]))
		}
	}
	median := stats.Median(all)
	var lits []string
	for seg, c := range counts {
		if !(float64(c) >= 5*median && 100*c >= total) {
			lits = append(lits, seg)
		}
	}
	if len(lits) > maxLiterals {
		sort.Strings(lits)
		star := n.child("{*}")
		for _, seg := range lits {
			star.merge(n.children[seg])
			delete(n.children, seg)
		}
	}
	for _, c := range n.children {
		c.collapse()
	}
}

// requests counts the requests whose paths end at or below n.
func (n *node) requests() int {
	sum := 0
	for _, h := range n.ends {
		sum += h.count
	}
	for _, c := range n.children {
		sum += c.requests()
	}
	return sum
}

func (n *node) merge(o *node) {
	n.ends = append(n.ends, o.ends...)
	for seg, c := range o.children {
		if mine := n.children[seg]; mine != nil {
			mine.merge(c)
			continue
		}
		if n.children == nil {
			n.children = map[string]*node{}
		}
		n.children[seg] = c
	}
}

// collapsible is a literal segment that may be a slug: not a placeholder, not the empty segment of a
// trailing slash, not a PHP script (an entry point such as index.php is never a slug).
func collapsible(seg string) bool {
	switch seg {
	case "", "{n}", "{uuid}", "{hex}", "{*}":
		return false
	}
	return !strings.HasSuffix(strings.ToLower(seg), ".php")
}

// segPattern replaces an ID segment by its kind.
func segPattern(s string) string {
	switch {
	case s == "":
		return s
	case allDigits(s):
		return "{n}"
	case isUUID(s):
		return "{uuid}"
	case len(s) >= 8 && isHexID(s):
		return "{hex}"
	}
	return s
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// isHexID is hex with a digit somewhere, so words such as "deadbeef" or "facade" stay.
func isHexID(s string) bool {
	digit := false
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
		digit = digit || s[i] <= '9'
	}
	return digit
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if s[i] != '-' {
				return false
			}
		} else if !isHex(s[i]) {
			return false
		}
	}
	return true
}

// queryNames is "?" and the sorted, distinct parameter names each with "=", or "" without any:
// values are dropped because /search?q=a and /search?q=b are the same page.
func queryNames(q string) string {
	var names []string
	for _, part := range strings.Split(q, "&") {
		if name, _, _ := strings.Cut(part, "="); name != "" {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteByte('?')
	for i, n := range names {
		if i > 0 && n == names[i-1] {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte('&')
		}
		b.WriteString(n)
		b.WriteByte('=')
	}
	return b.String()
}
