package accesslog

import (
	"bytes"
)

// request is what one log line says about the request. Its slices point into the line or into the
// parser's scratch, so they are valid only until the next line.
type request struct {
	method  []byte
	uri     []byte
	status  int // -1 when the format has no status
	seconds float64
	timed   bool
	// upstream is php-fpm's part of the time ($upstream_response_time), apart.
	upstream float64
	upTimed  bool
	// at is when the line says the request was logged (at its end), or began when start; microseconds since 1970.
	at      int64
	stamped bool
	start   bool
	coarse  bool // stamped to the second
	zone    int  // the stamp's offset from UTC, seconds, when zoned
	zoned   bool
	static  bool // a static file's path: set by the tally
}

// fields holds the raw values of one line's read fields.
type fields struct {
	reqLine, method, uri, path, args []byte
	status                           []byte
	hasStatus, hasArgs               bool
	seconds, upstream                float64
	timed, upTimed                   bool
	at                               stamp
}

var get = []byte("GET")

// parse matches one line (without its line end) against f. scratch is reused to join a path and
// its query when they are logged apart.
func (f *format) parse(line []byte, scratch *[]byte) (request, bool) {
	var v fields
	pos := 0
	for i := range f.toks {
		t := &f.toks[i]
		if t.lit != nil {
			if !bytes.HasPrefix(line[pos:], t.lit) {
				return request{}, false
			}
			pos += len(t.lit)
			continue
		}
		end := -1
		if t.times != nil {
			end = f.timeEnd(i, line, pos, &v.at)
		}
		if end < 0 {
			end = f.fieldEnd(i, line, pos)
		}
		if end < 0 {
			return request{}, false
		}
		if !v.set(t, line[pos:end]) {
			return request{}, false
		}
		pos = end
	}
	if f.tail {
		v.tailTimes(line[pos:])
	}
	return v.request(scratch)
}

// fieldEnd finds where the field at toks[i], starting at pos, ends: at the next literal (the first
// one not escaped by a backslash when it starts with a quote), at the end of the line for a last
// field, or at the next space for a built-in format's last field.
func (f *format) fieldEnd(i int, line []byte, pos int) int {
	from := pos
	if f.toks[i].bracket && pos < len(line) && line[pos] == '[' {
		j := bytes.IndexByte(line[pos:], ']')
		if j < 0 {
			return -1
		}
		from = pos + j + 1
	}
	if i+1 == len(f.toks) {
		if f.tail {
			if j := bytes.IndexByte(line[from:], ' '); j >= 0 {
				return from + j
			}
		}
		return len(line)
	}
	return indexLit(line, pos, from, f.toks[i+1].lit)
}

// timeEnd reads the time stamp of the field at toks[i]: where it ends, when one of its layouts reads it and the
// format's next text follows; else -1, and the field is matched as any other (the line counts, its time does not).
func (f *format) timeEnd(i int, line []byte, pos int, st *stamp) int {
	for _, l := range f.toks[i].times {
		s := *st
		end := l.read(line, pos, &s)
		if end >= 0 && f.follows(i, line, end) {
			*st = s
			return end
		}
	}
	return -1
}

// follows says whether the text after the field at toks[i] starts at end: the next literal, or the line's end
// (a space too after a built-in format's last field).
func (f *format) follows(i int, line []byte, end int) bool {
	if i+1 == len(f.toks) {
		return end == len(line) || f.tail && line[end] == ' '
	}
	return bytes.HasPrefix(line[end:], f.toks[i+1].lit)
}

// indexLit finds lit in line from from on; a quote preceded by an odd number of backslashes (after
// start, the field's beginning) is part of the value, not its end.
func indexLit(line []byte, start, from int, lit []byte) int {
	for {
		j := bytes.Index(line[from:], lit)
		if j < 0 {
			return -1
		}
		at := from + j
		if lit[0] != '"' || !escaped(line, start, at) {
			return at
		}
		from = at + 1
	}
}

func escaped(line []byte, start, at int) bool {
	n := 0
	for k := at - 1; k >= start && line[k] == '\\'; k-- {
		n++
	}
	return n%2 == 1
}

// set records a field's value; false when it is malformed.
func (v *fields) set(t *token, val []byte) bool {
	switch t.kind {
	case fRequest:
		v.reqLine = val
	case fMethod:
		v.method = val
	case fURI:
		if t.dash && len(val) > 0 && val[len(val)-1] == '-' && bytes.IndexByte(val, '?') < 0 {
			val = val[:len(val)-1] // nginx logs an absent $args as "-"
		}
		v.uri = val
	case fPath:
		v.path = val
	case fArgs:
		v.args, v.hasArgs = val, true
	case fStatus:
		v.status, v.hasStatus = val, true
	case fSeconds, fMillis, fMicros:
		v.setTime(t.kind, val)
	case fUpstream:
		v.upstream, v.upTimed = sumTimes(val)
	}
	return true
}

func (v *fields) setTime(k fieldKind, val []byte) {
	s, ok := parseDecimal(val)
	if !ok {
		return
	}
	switch k {
	case fMillis:
		s /= 1e3
	case fMicros:
		s /= 1e6
	}
	v.seconds, v.timed = s, true
}

// request validates the fields and picks the sources: the method from $request_method or the
// request line (GET when neither is logged), the URI from $request_uri, the request line, or the
// path and query.
func (v *fields) request(scratch *[]byte) (request, bool) {
	r := request{status: -1}
	if v.reqLine != nil {
		m, u, ok := splitRequest(v.reqLine)
		if !ok {
			return v.noRequest()
		}
		r.method, r.uri = m, u
	}
	if v.method != nil {
		r.method = v.method
	}
	if r.method == nil {
		r.method = get
	}
	if v.uri != nil {
		r.uri = v.uri
	} else if r.uri == nil && v.path != nil {
		r.uri = v.joinPath(scratch)
	}
	if !validMethod(r.method) || len(r.uri) == 0 || r.uri[0] != '/' {
		return v.noRequest() // a proxy probe (GET http://...), a lower-case method: not the app's
	}
	if v.hasStatus {
		s, ok := parseStatus(v.status)
		if !ok {
			return request{}, false
		}
		r.status = s
	}
	r.seconds, r.timed = v.seconds, v.timed
	if !r.timed {
		r.seconds, r.timed = v.upstream, v.upTimed
	}
	r.upstream, r.upTimed = v.upstream, v.upTimed
	r.at, r.stamped = v.at.micros()
	r.start, r.coarse, r.zone, r.zoned = v.at.start, v.at.coarse(), v.at.zone, v.at.hasZone
	return r, true
}

// noRequest is a line that fits the format but logs no request ("-" for a connection closed before one, a
// TLS handshake on the plain port): a request with no URI, dropped as such, when its status is a number;
// else the line is malformed.
func (v *fields) noRequest() (request, bool) {
	if !v.hasStatus {
		return request{}, false
	}
	s, ok := parseStatus(v.status)
	if !ok {
		return request{}, false
	}
	return request{status: s}, true
}

// joinPath is the path with its query; nginx's $args is "-" or empty without one, Apache's %q is
// empty or starts with "?".
func (v *fields) joinPath(scratch *[]byte) []byte {
	a := v.args
	if len(a) > 0 && a[0] == '?' {
		a = a[1:]
	}
	if !v.hasArgs || len(a) == 0 || len(a) == 1 && a[0] == '-' {
		return v.path
	}
	b := append((*scratch)[:0], v.path...)
	b = append(b, '?')
	b = append(b, a...)
	*scratch = b
	return b
}

// splitRequest splits "METHOD URI PROTO"; anything else (a "-", a scanner's junk) is malformed.
func splitRequest(r []byte) (method, uri []byte, ok bool) {
	sp := bytes.IndexByte(r, ' ')
	last := bytes.LastIndexByte(r, ' ')
	if sp <= 0 || last == sp {
		return nil, nil, false
	}
	uri = r[sp+1 : last]
	if !bytes.HasPrefix(r[last+1:], []byte("HTTP/")) || bytes.IndexByte(uri, ' ') >= 0 {
		return nil, nil, false
	}
	return r[:sp], uri, true
}

func validMethod(m []byte) bool {
	if len(m) == 0 || len(m) > 20 {
		return false
	}
	for _, c := range m {
		if (c < 'A' || c > 'Z') && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

func parseStatus(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 4 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// parseDecimal reads "123", "0.123" or ".5"; no sign, no exponent, as logs write times. A value this
// parser cannot read is no time rather than a bad line.
func parseDecimal(b []byte) (float64, bool) {
	if len(b) == 0 || len(b) > 32 {
		return 0, false
	}
	var whole, frac float64
	scale := 1.0
	digits, dot := 0, false
	for _, c := range b {
		switch {
		case c == '.' && !dot:
			dot = true
		case c >= '0' && c <= '9' && !dot:
			whole = whole*10 + float64(c-'0')
			digits++
		case c >= '0' && c <= '9':
			frac = frac*10 + float64(c-'0')
			scale *= 10
			digits++
		default:
			return 0, false
		}
	}
	return whole + frac/scale, digits > 0
}

// sumTimes adds up an upstream time list ("0.120, 0.050" or "0.1 : 0.2", one per upstream tried);
// "-" entries are skipped.
func sumTimes(b []byte) (float64, bool) {
	sum, found := 0.0, false
	for len(b) > 0 {
		i := bytes.IndexAny(b, ",: ")
		part := b
		if i >= 0 {
			part, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if s, ok := parseDecimal(part); ok {
			sum, found = sum+s, true
		}
	}
	return sum, found
}
