package accesslog

import (
	"fmt"
	"regexp"
	"strings"
)

// tally counts what the lines say, per concrete request, while the files are read.
type tally struct {
	m       Mix
	fixed   *format // the user's format; nil to detect one per file
	keep    Keep
	exclude *regexp.Regexp
	dropped [nReasons]int
	uris    map[string]map[string]*hit // method, then URI
	seq     int
	formats []string // names of the formats the files were read with, distinct
	load    loadTally
}

func newTally(o Options) (*tally, error) {
	t := &tally{keep: o.Keep, exclude: o.Exclude, uris: map[string]map[string]*hit{}}
	switch o.Format {
	case "":
	case combinedFormat.name:
		t.fixed = combinedFormat
	case commonFormat.name:
		t.fixed = commonFormat
	default:
		f, err := compileFormat(o.Format)
		if err != nil {
			return nil, err
		}
		t.fixed = f
	}
	return t, nil
}

// lineParser parses the lines of one file, settling its format on the way when auto-detecting.
type lineParser struct {
	f       *format
	common  int // lines that matched only common so far
	scratch []byte
}

func (t *tally) parserFor() *lineParser { return &lineParser{f: t.fixed} }

func (p *lineParser) parse(b []byte) (request, bool) {
	if p.f != nil {
		return p.f.parse(b, &p.scratch)
	}
	if r, ok := combinedFormat.parse(b, &p.scratch); ok {
		p.f = combinedFormat
		return r, true
	}
	r, ok := commonFormat.parse(b, &p.scratch)
	if ok {
		p.common++
		if p.common >= detectLines {
			p.f = commonFormat
		}
	}
	return r, ok
}

// name is the format the file was read with, "" if no line matched.
func (p *lineParser) name() string {
	switch {
	case p.f != nil:
		return p.f.name
	case p.common > 0:
		return commonFormat.name
	}
	return ""
}

func (t *tally) noteFormat(p *lineParser) {
	n := p.name()
	for _, f := range t.formats {
		if f == n {
			return
		}
	}
	if n != "" {
		t.formats = append(t.formats, n)
	}
}

// line handles one line without its line end; blank lines are not counted.
func (t *tally) line(name string, n int, b []byte, p *lineParser) {
	if len(b) == 0 {
		return
	}
	t.m.Lines++
	r, ok := p.parse(b)
	if !ok {
		t.bad(name, n, b)
		return
	}
	if r.uri != nil {
		r.static = isStatic(pathOf(r.uri))
		if t.keep.Static || !r.static {
			t.load.add(&r) // every request PHP sees loads the pool, replayed or not
		}
	}
	if why := t.keep.drop(&r); why != keepIt {
		t.dropped[why]++
		return
	}
	if t.exclude != nil && t.exclude.Match(r.uri) {
		t.dropped[byExclude]++
		return
	}
	t.add(&r)
}

// add counts a kept request; the maps are looked up with the line's bytes, so only a URI seen for the
// first time is copied.
func (t *tally) add(r *request) {
	t.m.Kept++
	byURI := t.uris[string(r.method)]
	if byURI == nil {
		byURI = map[string]*hit{}
		t.uris[string(r.method)] = byURI
	}
	h := byURI[string(r.uri)]
	if h == nil {
		h = &hit{method: string(r.method), uri: string(r.uri), seq: t.seq}
		t.seq++
		byURI[h.uri] = h
	}
	h.count++
	if r.timed {
		h.timeSum += r.seconds
		h.timed++
		t.m.HasTime = true
	}
}

func (t *tally) hits() []*hit {
	out := make([]*hit, 0, t.seq)
	for _, byURI := range t.uris {
		for _, h := range byURI {
			out = append(out, h)
		}
	}
	return out
}

// mix finishes the counts and chooses the routes.
func (t *tally) mix(o Options) (*Mix, error) {
	m := &t.m
	m.Dropped = make(map[string]int, nReasons)
	for r := byNoRequest; r < nReasons; r++ {
		m.Dropped[reasons[r].key] = t.dropped[r]
	}
	m.Format = strings.Join(t.formats, ", ")
	if t.fixed != nil {
		m.Format = t.fixed.name
	}
	if err := t.check(); err != nil {
		return nil, err
	}
	m.Load = t.load.load()
	m.Routes, m.Covered = choose(buildRoutes(t.hits()), m.Kept, m.HasTime, o.withDefaults())
	return m, nil
}

// check says why there is nothing to replay, if so.
func (t *tally) check() error {
	m := &t.m
	files := strings.Join(m.Files, ", ")
	switch {
	case m.Lines == 0:
		return fmt.Errorf("access log %s has no lines", files)
	case m.Unparsed == m.Lines:
		return t.noMatch(files)
	case m.Kept == 0:
		return t.allDropped(files)
	}
	return nil
}

func (t *tally) noMatch(files string) error {
	b := t.m.FirstBad[0]
	where := fmt.Sprintf("line %d", b.Line)
	if len(t.m.Files) > 1 {
		where += " of " + b.File
	}
	if t.fixed != nil {
		return fmt.Errorf("no line of %s matched the log format %q (%s: %q): check --log-format against the log_format in nginx.conf or the LogFormat in the Apache config",
			files, t.fixed.name, where, b.Text)
	}
	return fmt.Errorf("no line of %s matched the combined or common format (%s: %q): give the log_format as --log-format '...' "+
		`(the nginx log_format or Apache LogFormat the log was written with, e.g. '$remote_addr [$time_local] "$request" $status $request_time')`,
		files, where, b.Text)
}

func (t *tally) allDropped(files string) error {
	var parts []string
	for r := byNoRequest; r < nReasons; r++ {
		if n := t.dropped[r]; n > 0 && reasons[r].word != "" {
			parts = append(parts, fmt.Sprintf("%d %s (--log-keep %s)", n, reasons[r].what, reasons[r].word))
		} else if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, reasons[r].what))
		}
	}
	return fmt.Errorf("no request of %s is left to replay after the filters: dropped %s", files, strings.Join(parts, ", "))
}
