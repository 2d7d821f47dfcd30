package accesslog

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// Options says how to read the log and how much of it to keep.
type Options struct {
	Format   string  // "" = auto-detect (combined or common, nginx or Apache); "combined" or "common" to force one; else an nginx log_format or Apache LogFormat pattern
	Top      int     // at most this many routes by requests (default 10)
	Examples int     // concrete URIs per route (default 3)
	Coverage float64 // stop adding routes by requests once they cover this share of kept requests (default 0.95)
	Keep     Keep
	// Exclude leaves out requests whose URI (path and query, as logged) it matches: pages not to be
	// replayed (an admin area, a private API).
	Exclude *regexp.Regexp
}

// BadLine is an unparseable line, for the user to see what did not match.
type BadLine struct {
	File string
	Line int // 1-based, in its file
	Text string
}

// Example is a concrete URI of a route and its weight in the mix.
type Example struct {
	URI    string
	Count  int
	Weight int
}

// Route is requests that differ only by IDs, slugs or query values.
type Route struct {
	Method    string
	Pattern   string  // "/post/{n}" or "/search?q="
	Count     int     // requests
	Share     float64 // of kept requests
	TimeShare float64 // of kept requests' total time (0 without times)
	MeanTime  float64 // seconds (0 without times)
	Why       string  // "requests", "time", "requests+time"
	Examples  []Example
}

// Mix is what was read and what was chosen.
type Mix struct {
	Files    []string
	Lines    int // lines read (blank ones not counted)
	Unparsed int
	FirstBad []BadLine      // up to 5
	Dropped  map[string]int // "no_request", "method", "status", "static", "health"
	Kept     int            // requests after the filters
	HasTime  bool
	Routes   []Route // chosen, by requests (time-picked ones after)
	Covered  float64 // share of kept requests the chosen routes hold
	Format   string  // the format used, as a name ("combined", "common") or the pattern
	Load     *Load   // the traffic over time, from the stamps
}

const (
	maxLine  = 64 << 10 // longer lines are counted unparseable and skipped
	maxBad   = 5
	maxShown = 200 // characters of a bad line kept
	// detectLines is how many lines matching only common it takes to settle on common; one line
	// matching combined settles on combined.
	detectLines = 10
)

// Read reads the files in order (each plain or gzip) and chooses the mix.
func Read(paths []string, o Options) (*Mix, error) {
	if len(paths) == 0 {
		return nil, errors.New("no access log given")
	}
	t, err := newTally(o)
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		if err := t.readFile(p); err != nil {
			return nil, err
		}
	}
	return t.mix(o)
}

// ReadFrom is Read for one stream (name for messages).
func ReadFrom(r io.Reader, name string, o Options) (*Mix, error) {
	t, err := newTally(o)
	if err != nil {
		return nil, err
	}
	if err := t.read(r, name); err != nil {
		return nil, err
	}
	return t.mix(o)
}

func (t *tally) readFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("access log %s: %w", path, err)
	}
	defer f.Close()
	return t.read(f, path)
}

// read reads one stream, gunzipping it when it starts with the gzip magic (rotated logs keep
// their name less often than their content).
func (t *tally) read(r io.Reader, name string) error {
	t.m.Files = append(t.m.Files, name)
	br := bufio.NewReaderSize(r, maxLine)
	zipped := false
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("access log %s: corrupt gzip: %w", name, err)
		}
		defer zr.Close()
		br, zipped = bufio.NewReaderSize(zr, maxLine), true
	}
	p := t.parserFor()
	t.load.newFile()
	err := t.lines(br, name, p)
	t.noteFormat(p)
	if err != nil && zipped {
		return fmt.Errorf("access log %s: corrupt gzip: %w", name, err)
	}
	if err != nil {
		return fmt.Errorf("access log %s: %w", name, err)
	}
	return nil
}

// lines feeds each line to the tally; a line longer than the buffer is counted bad and skipped.
func (t *tally) lines(br *bufio.Reader, name string, p *lineParser) error {
	for n := 1; ; n++ {
		b, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			t.m.Lines++
			t.bad(name, n, b)
			err = skipLine(br)
		} else if len(b) > 0 {
			t.line(name, n, trimEOL(b), p)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// skipLine discards the rest of an over-long line.
func skipLine(br *bufio.Reader) error {
	for {
		_, err := br.ReadSlice('\n')
		if err != bufio.ErrBufferFull {
			return err
		}
	}
}

func trimEOL(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\n' {
		b = b[:len(b)-1]
	}
	if len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	return b
}

func (t *tally) bad(name string, n int, b []byte) {
	t.m.Unparsed++
	if len(t.m.FirstBad) < maxBad {
		text := strings.ToValidUTF8(string(b[:min(len(b), maxShown)]), "\uFFFD")
		t.m.FirstBad = append(t.m.FirstBad, BadLine{File: name, Line: n, Text: text})
	}
}
