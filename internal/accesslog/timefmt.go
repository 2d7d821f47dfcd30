package accesslog

import (
	"bytes"
	"strings"
)

// timeLayout reads one time stamp field as a log writes it. Each element reads exactly the bytes it matches, so a
// time field ends where its stamp does, whatever text follows (nginx's $time_local holds a space).
type timeLayout struct {
	elems []telem
	// start marks a stamp taken when the request began (Apache's %t); nginx stamps a line when it is logged, at
	// the request's end.
	start bool
}

type telemKind uint8

const (
	tLit      telemKind = iota
	tDay                // %d, %e: one or two digits, maybe space-padded
	tMonName            // %b, %h, %B: a month's name, its first three letters read
	tMonNum             // %m
	tYear               // %Y
	tYear2              // %y: 69-99 are 1900s, 00-68 2000s (POSIX)
	tHour               // %H, %k
	tHour12             // %I, %l
	tAMPM               // %p
	tMin                // %M
	tSec                // %S
	tFrac               // Apache's msec_frac, usec_frac: fraction digits
	tOptFrac            // an optional ".123" (ISO 8601 seconds may carry one)
	tZone               // %z: +hhmm, +hh:mm or Z
	tZoneName           // %Z: UTC, GMT or Z read as +0000; another name leaves the zone unknown
	tEpoch              // %s, sec, msec, usec: an integer count since 1970 (scale: microseconds a unit)
	tEpochDec           // nginx's $msec: seconds since 1970 with a fraction
	tWord               // %a, %A: a weekday's name, skipped
)

type telem struct {
	kind  telemKind
	lit   byte
	scale int64 // tEpoch: microseconds a unit
}

// stamp gathers what a line's time fields say; Apache may log one stamp in several (%{%d/%b/%Y %T}t.%{msec_frac}t).
type stamp struct {
	year, mon, day, hour, min, sec int
	pm, am                         bool
	frac                           int64 // microseconds
	fracDigits                     int
	zone                           int // seconds east of UTC
	epoch                          int64
	hasDate, hasClock, hasZone     bool
	hasEpoch, fine, start, hour12  bool
}

// micros is the stamp as microseconds since 1970 (UTC): the moment the request was logged (or began, for start).
// A stamp to the second is taken as the middle of its second: the request ended (or began) somewhere in it.
func (s *stamp) micros() (int64, bool) {
	var us int64
	switch {
	case s.hasEpoch:
		us = s.epoch + s.frac
	case s.hasDate && s.hasClock:
		h := s.hour
		if s.hour12 {
			h %= 12
			if s.pm {
				h += 12
			}
		}
		secs := daysFromCivil(s.year, s.mon, s.day)*86400 + int64(h*3600+s.min*60+s.sec) - int64(s.zone)
		us = secs*1e6 + s.frac
	default:
		return 0, false
	}
	if s.coarse() {
		us += 5e5
	}
	return us, true
}

// coarse says the stamp is to the second.
func (s *stamp) coarse() bool { return !s.fine && s.fracDigits == 0 }

// daysFromCivil is the day number of a date since 1970-01-01 (proleptic Gregorian; H. Hinnant's algorithm).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// The layouts phptune reads without being told.
var (
	// nginx's $time_local and the bracket of combined and common (also Apache's %t, bracket aside).
	timeLocal = mustStrftime("%d/%b/%Y:%H:%M:%S %z", false)
	// nginx's $time_iso8601: 2026-11-25T14:17:23+00:00 (a fraction is read too).
	timeISO = &timeLayout{elems: []telem{{kind: tYear}, {lit: '-'}, {kind: tMonNum}, {lit: '-'}, {kind: tDay}, {lit: 'T'},
		{kind: tHour}, {lit: ':'}, {kind: tMin}, {lit: ':'}, {kind: tSec}, {kind: tOptFrac}, {kind: tZone}}}
	// nginx's $msec: 1764080243.123.
	timeMsec = &timeLayout{elems: []telem{{kind: tEpochDec}}}
	// Apache's %t: [25/Nov/2026:14:17:23 +0000], when the request was received.
	timeApache = mustStrftime("[%d/%b/%Y:%H:%M:%S %z]", true)
)

func mustStrftime(f string, start bool) *timeLayout {
	l, ok := compileStrftime(f, start)
	if !ok {
		panic("bad built-in time layout " + f)
	}
	return l
}

// nginxTimes are the nginx variables that hold a time stamp, with the layouts tried in order (an ISO stamp in
// the bracket of a combined-like format is read too).
var nginxTimes = map[string][]*timeLayout{
	"time_local":   {timeLocal, timeISO},
	"time_iso8601": {timeISO},
	"msec":         {timeMsec},
}

// apacheTime is the layout of Apache's %{format}t: begin: or end: first says which moment (begin by default);
// sec, msec, usec are counts since 1970, msec_frac and usec_frac a fraction to go with another %{...}t; else a
// strftime format. ok is false for a directive phptune does not read.
func apacheTime(arg string) (*timeLayout, bool) {
	start := true
	if rest, found := strings.CutPrefix(arg, "begin:"); found {
		arg = rest
	} else if rest, found := strings.CutPrefix(arg, "end:"); found {
		arg, start = rest, false
	}
	one := func(e telem) *timeLayout { return &timeLayout{elems: []telem{e}, start: start} }
	switch arg {
	case "":
		return timeApache, true
	case "sec":
		return one(telem{kind: tEpoch, scale: 1e6}), true
	case "msec":
		return one(telem{kind: tEpoch, scale: 1e3}), true
	case "usec":
		return one(telem{kind: tEpoch, scale: 1}), true
	case "msec_frac", "usec_frac":
		return one(telem{kind: tFrac}), true
	}
	return compileStrftime(arg, start)
}

// compileStrftime compiles the strftime(3) directives logs use: %d %e %b %h %B %m %Y %y %H %k %I %l %p %M %S %T
// %R %D %F %z %Z %s %a %A %%; ok is false for any other.
func compileStrftime(f string, start bool) (*timeLayout, bool) {
	l := &timeLayout{start: start}
	add := func(ks ...telemKind) {
		for _, k := range ks {
			l.elems = append(l.elems, telem{kind: k})
		}
	}
	lit := func(s string) {
		for i := 0; i < len(s); i++ {
			l.elems = append(l.elems, telem{lit: s[i]})
		}
	}
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			lit(f[i : i+1])
			continue
		}
		if i++; i == len(f) {
			return nil, false
		}
		switch f[i] {
		case 'd', 'e':
			add(tDay)
		case 'b', 'h', 'B':
			add(tMonName)
		case 'm':
			add(tMonNum)
		case 'Y':
			add(tYear)
		case 'y':
			add(tYear2)
		case 'H', 'k':
			add(tHour)
		case 'I', 'l':
			add(tHour12)
		case 'p':
			add(tAMPM)
		case 'M':
			add(tMin)
		case 'S':
			add(tSec)
		case 'T':
			add(tHour)
			lit(":")
			add(tMin)
			lit(":")
			add(tSec)
		case 'R':
			add(tHour)
			lit(":")
			add(tMin)
		case 'D':
			add(tMonNum)
			lit("/")
			add(tDay)
			lit("/")
			add(tYear2)
		case 'F':
			add(tYear)
			lit("-")
			add(tMonNum)
			lit("-")
			add(tDay)
		case 'z':
			add(tZone)
		case 'Z':
			add(tZoneName)
		case 's':
			l.elems = append(l.elems, telem{kind: tEpoch, scale: 1e6})
		case 'a', 'A':
			add(tWord)
		case '%':
			lit("%")
		default:
			return nil, false
		}
	}
	return l, len(l.elems) > 0
}

// read reads the layout at line[pos:] into st; it returns where the stamp ends, or -1 when the text is not one.
func (l *timeLayout) read(line []byte, pos int, st *stamp) int {
	if l.start {
		st.start = true
	}
	for _, e := range l.elems {
		if pos = e.read(line, pos, st); pos < 0 {
			return -1
		}
	}
	return pos
}

// read reads one element at line[pos:]; -1 when it does not match.
func (e telem) read(line []byte, pos int, st *stamp) int {
	switch e.kind {
	case tLit:
		if pos < len(line) && line[pos] == e.lit {
			return pos + 1
		}
		return -1
	case tDay:
		return number(line, pos, 2, true, 1, 31, &st.day)
	case tMonNum:
		pos = number(line, pos, 2, false, 1, 12, &st.mon)
		st.hasDate = st.hasDate || pos >= 0
		return pos
	case tMonName:
		pos = monthName(line, pos, &st.mon)
		st.hasDate = st.hasDate || pos >= 0
		return pos
	case tYear:
		return number(line, pos, 4, false, 0, 9999, &st.year)
	case tYear2:
		if pos = number(line, pos, 2, false, 0, 99, &st.year); pos >= 0 {
			st.year += 2000
			if st.year >= 2069 {
				st.year -= 100
			}
		}
		return pos
	case tHour:
		pos = number(line, pos, 2, true, 0, 23, &st.hour)
		st.hasClock = st.hasClock || pos >= 0
		return pos
	case tHour12:
		pos = number(line, pos, 2, true, 1, 12, &st.hour)
		st.hasClock, st.hour12 = st.hasClock || pos >= 0, true
		return pos
	case tAMPM:
		return ampm(line, pos, st)
	case tMin:
		return number(line, pos, 2, false, 0, 59, &st.min)
	case tSec:
		return number(line, pos, 2, false, 0, 60, &st.sec)
	case tFrac:
		return fraction(line, pos, st)
	case tOptFrac:
		if pos < len(line) && (line[pos] == '.' || line[pos] == ',') {
			return fraction(line, pos+1, st)
		}
		return pos
	case tZone:
		return zone(line, pos, st)
	case tZoneName:
		return zoneName(line, pos, st)
	case tEpoch:
		return epoch(line, pos, e.scale, st)
	case tEpochDec:
		if pos = epoch(line, pos, 1e6, st); pos >= 0 && pos < len(line) && line[pos] == '.' {
			return fraction(line, pos+1, st)
		}
		return pos
	case tWord:
		end := pos
		for end < len(line) && isLetter(line[end]) {
			end++
		}
		if end == pos {
			return -1
		}
		return end
	}
	return -1
}

// number reads up to width digits (at least one; padded: a leading space allowed) within [lo, hi].
func number(line []byte, pos, width int, padded bool, lo, hi int, out *int) int {
	if padded && pos < len(line) && line[pos] == ' ' {
		pos++
		width--
	}
	n, end := 0, pos
	for end < len(line) && end-pos < width && line[end] >= '0' && line[end] <= '9' {
		n = n*10 + int(line[end]-'0')
		end++
	}
	if end == pos || n < lo || n > hi {
		return -1
	}
	*out = n
	return end
}

// fraction reads the digits of a second's fraction (at most nine read, more skipped).
func fraction(line []byte, pos int, st *stamp) int {
	var us int64
	end, digits := pos, 0
	for end < len(line) && line[end] >= '0' && line[end] <= '9' {
		if digits < 6 {
			us = us*10 + int64(line[end]-'0')
		}
		digits++
		end++
	}
	if digits == 0 {
		return -1
	}
	for d := digits; d < 6; d++ {
		us *= 10
	}
	st.frac, st.fracDigits = us, digits
	return end
}

// epoch reads a count of units since 1970 (scale microseconds each).
func epoch(line []byte, pos int, scale int64, st *stamp) int {
	var n int64
	end := pos
	for end < len(line) && end-pos < 19 && line[end] >= '0' && line[end] <= '9' {
		n = n*10 + int64(line[end]-'0')
		end++
	}
	if end == pos || n > (1<<62)/scale {
		return -1
	}
	st.epoch, st.hasEpoch = n*scale, true
	st.fine = st.fine || scale < 1e6
	return end
}

// zone reads +hhmm, +hh:mm, +hh or Z.
func zone(line []byte, pos int, st *stamp) int {
	if pos < len(line) && line[pos] == 'Z' {
		st.zone, st.hasZone = 0, true
		return pos + 1
	}
	if pos >= len(line) || line[pos] != '+' && line[pos] != '-' {
		return -1
	}
	sign := 1
	if line[pos] == '-' {
		sign = -1
	}
	var h, m int
	end := number2(line, pos+1, &h)
	if end < 0 || h > 23 {
		return -1
	}
	if end < len(line) && line[end] == ':' {
		if e := number2(line, end+1, &m); e >= 0 {
			end = e
		}
	} else if e := number2(line, end, &m); e >= 0 {
		end = e
	}
	if m > 59 {
		return -1
	}
	st.zone, st.hasZone = sign*(h*3600+m*60), true
	return end
}

// number2 reads exactly two digits.
func number2(line []byte, pos int, out *int) int {
	if pos+2 > len(line) || !isDigit(line[pos]) || !isDigit(line[pos+1]) {
		return -1
	}
	*out = int(line[pos]-'0')*10 + int(line[pos+1]-'0')
	return pos + 2
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func zoneName(line []byte, pos int, st *stamp) int {
	end := pos
	for end < len(line) && isLetter(line[end]) {
		end++
	}
	if end == pos {
		return -1
	}
	if n := line[pos:end]; bytes.EqualFold(n, []byte("UTC")) || bytes.EqualFold(n, []byte("GMT")) || bytes.EqualFold(n, []byte("Z")) {
		st.zone, st.hasZone = 0, true
	}
	return end
}

func ampm(line []byte, pos int, st *stamp) int {
	if pos+2 > len(line) || line[pos+1]|0x20 != 'm' {
		return -1
	}
	switch line[pos] | 0x20 {
	case 'a':
		st.am = true
	case 'p':
		st.pm = true
	default:
		return -1
	}
	return pos + 2
}

// months packs each month's first three letters, lower case, as monthKey does.
var months = [12]uint32{monthKey('j', 'a', 'n'), monthKey('f', 'e', 'b'), monthKey('m', 'a', 'r'), monthKey('a', 'p', 'r'),
	monthKey('m', 'a', 'y'), monthKey('j', 'u', 'n'), monthKey('j', 'u', 'l'), monthKey('a', 'u', 'g'), monthKey('s', 'e', 'p'),
	monthKey('o', 'c', 't'), monthKey('n', 'o', 'v'), monthKey('d', 'e', 'c')}

func monthKey(a, b, c byte) uint32 { return uint32(a|0x20)<<16 | uint32(b|0x20)<<8 | uint32(c|0x20) }

// monthName reads a month's English name, abbreviated or full (any case); its first three letters decide.
func monthName(line []byte, pos int, out *int) int {
	if pos+3 > len(line) {
		return -1
	}
	k := monthKey(line[pos], line[pos+1], line[pos+2])
	for i, m := range months {
		if k == m {
			end := pos + 3
			for end < len(line) && isLetter(line[end]) {
				end++
			}
			*out = i + 1
			return end
		}
	}
	return -1
}
