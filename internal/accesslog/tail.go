package accesslog

import "bytes"

// tailTimes reads a request time from the fields after a built-in format (see the package doc):
// rt= or request_time= first, then the first bare number with a dot, then urt= or
// upstream_response_time= as a fallback.
func (v *fields) tailTimes(b []byte) {
	var bare, keyed, up float64
	var hasBare, hasKeyed, hasUp bool
	for len(b) > 0 {
		var key, val []byte
		key, val, b = nextTailField(b)
		switch {
		case key == nil:
			if !hasBare && bytes.IndexByte(val, '.') >= 0 {
				bare, hasBare = parseDecimal(val)
			}
		case string(key) == "rt" || string(key) == "request_time":
			keyed, hasKeyed = parseDecimal(val)
		case string(key) == "urt" || string(key) == "upstream_response_time":
			up, hasUp = sumTimes(val)
		}
	}
	// A time over an hour is no request time (an appended $msec, a byte count with a dot): not one.
	switch {
	case hasKeyed && plausible(keyed):
		v.seconds, v.timed = keyed, true
	case hasBare && plausible(bare):
		v.seconds, v.timed = bare, true
	}
	if hasUp && plausible(up) {
		v.upstream, v.upTimed = up, true
	}
}

func plausible(s float64) bool { return s >= 0 && s <= 3600 }

// nextTailField splits off one space-separated field: key=value (value maybe quoted), a bare word
// (key nil), or a quoted string (key and value nil, as nothing in one is read). It returns the rest.
func nextTailField(b []byte) (key, val, rest []byte) {
	for len(b) > 0 && b[0] == ' ' {
		b = b[1:]
	}
	if len(b) == 0 {
		return nil, nil, nil
	}
	if b[0] == '"' {
		_, rest = quoted(b)
		return nil, nil, rest
	}
	i := 0
	for i < len(b) && b[i] != ' ' && b[i] != '=' && b[i] != '"' {
		i++
	}
	if i < len(b) && b[i] == '=' {
		key = b[:i]
		if i+1 < len(b) && b[i+1] == '"' {
			val, rest = quoted(b[i+1:])
			return key, val, rest
		}
		val, rest = word(b[i+1:])
		return key, val, rest
	}
	val, rest = word(b)
	return nil, val, rest
}

// quoted reads a "..." string at the start of b, honouring \" escapes; unclosed runs to the end.
func quoted(b []byte) (val, rest []byte) {
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return b[1:i], b[i+1:]
		}
	}
	return b[1:], nil
}

func word(b []byte) (val, rest []byte) {
	if i := bytes.IndexByte(b, ' '); i >= 0 {
		return b[:i], b[i+1:]
	}
	return b, nil
}
