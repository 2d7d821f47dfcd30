package accesslog

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestReadGzipAndSeveralFiles(t *testing.T) {
	plain := writeFile(t, "access.log", []byte(logOf("/post/1", "/post/2")+"junk\n"))
	// Rotated and compressed without a .gz name: the magic bytes tell.
	zipped := writeFile(t, "access.log.1", gzipped(t, "junk too\n"+logOf("/post/3", "/about")))
	m, err := Read([]string{plain, zipped}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Files) != 2 || m.Lines != 6 || m.Kept != 4 || m.Format != "combined" {
		t.Errorf("files %v lines %d kept %d format %q", m.Files, m.Lines, m.Kept, m.Format)
	}
	if len(m.FirstBad) != 2 || m.FirstBad[0] != (BadLine{plain, 3, "junk"}) || m.FirstBad[1] != (BadLine{zipped, 1, "junk too"}) {
		t.Errorf("bad lines %+v", m.FirstBad)
	}
	if r := routeMap(m)["GET /post/{n}"]; r.Count != 3 {
		t.Errorf("routes %v", routeMap(m))
	}
}

func TestReadMixedFormats(t *testing.T) {
	common := `127.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.0" 200 2326` + "\n"
	a := writeFile(t, "a.log", []byte(strings.Repeat(common, 12)))
	b := writeFile(t, "b.log", []byte(logOf("/a")))
	m, err := Read([]string{a, b}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Format != "common, combined" || m.Kept != 13 {
		t.Errorf("format %q kept %d", m.Format, m.Kept)
	}
}

func TestReadErrors(t *testing.T) {
	good := writeFile(t, "good.log", []byte(logOf("/")))
	missing := filepath.Join(t.TempDir(), "missing.log")
	_, err := Read([]string{good, missing}, Options{})
	if err == nil || !strings.Contains(err.Error(), "access log "+missing) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	zipped := gzipped(t, logOf("/a", "/b", "/c"))
	for name, data := range map[string][]byte{
		"bad-header.gz": {0x1f, 0x8b, 0, 0, 0, 0},
		"truncated.gz":  zipped[:len(zipped)/2],
		"corrupt.gz":    append(append([]byte{}, zipped[:12]...), bytes.Repeat([]byte{0xff}, 40)...),
	} {
		p := writeFile(t, name, data)
		_, err := Read([]string{p}, Options{})
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "gzip") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Read(nil, Options{}); err == nil {
		t.Error("no files: no error")
	}
	if _, err := Read([]string{good}, Options{Format: "$remote_addr"}); err == nil || !strings.Contains(err.Error(), "no request URI") {
		t.Errorf("bad format: %v", err)
	}
}

func TestReadEmpty(t *testing.T) {
	for _, log := range []string{"", "\n\n\r\n"} {
		_, err := ReadFrom(strings.NewReader(log), "access.log", Options{})
		if err == nil || !strings.Contains(err.Error(), "access.log has no lines") {
			t.Errorf("%q: %v", log, err)
		}
	}
}

func TestReadUnparseable(t *testing.T) {
	var lines []string
	for i := range 7 {
		lines = append(lines, combined("GET", "/ok", 200), strings.Repeat("?", i+1))
	}
	m := readString(t, strings.Join(lines, "\r\n"), Options{})
	if m.Lines != 14 || m.Unparsed != 7 || m.Kept != 7 || len(m.FirstBad) != maxBad {
		t.Fatalf("lines %d unparsed %d kept %d bad %+v", m.Lines, m.Unparsed, m.Kept, m.FirstBad)
	}
	if b := m.FirstBad[4]; b.Line != 10 || b.Text != "?????" || b.File != "access.log" {
		t.Errorf("fifth bad line %+v", b)
	}
	var out bytes.Buffer
	m.Summary(&out)
	if !strings.Contains(out.String(), `7 unparseable (first: access.log:2 "?")`) {
		t.Errorf("summary:\n%s", out.String())
	}
}

func TestReadLongLine(t *testing.T) {
	long := combined("GET", "/"+strings.Repeat("x", 70<<10), 200)
	m := readString(t, logOf("/a")+long+"\n"+logOf("/b")+long, Options{})
	if m.Lines != 4 || m.Unparsed != 2 || m.Kept != 2 {
		t.Fatalf("lines %d unparsed %d kept %d", m.Lines, m.Unparsed, m.Kept)
	}
	if b := m.FirstBad[0]; b.Line != 2 || len(b.Text) != maxShown || !strings.HasPrefix(b.Text, "203.0.113.7 - -") {
		t.Errorf("bad line %d %q", b.Line, b.Text)
	}
	if m.FirstBad[1].Line != 4 {
		t.Errorf("second long line at %d", m.FirstBad[1].Line)
	}
}

func TestReadNothingMatches(t *testing.T) {
	_, err := ReadFrom(strings.NewReader("2024-10-10T13:55:36 GET /a 200\nmore\n"), "access.log", Options{})
	want := `no line of access.log matched the combined or common format (line 1: "2024-10-10T13:55:36 GET /a 200"): give the log_format as --log-format '...'`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v\nwant prefix %s", err, want)
	}
	_, err = ReadFrom(strings.NewReader(logOf("/a")), "access.log", Options{Format: "$time_iso8601 $request_method $request_uri $status"})
	if err == nil || !strings.Contains(err.Error(), "matched the log format") || !strings.Contains(err.Error(), "line 1:") {
		t.Errorf("custom format: %v", err)
	}
}

func TestReadAllFiltered(t *testing.T) {
	log := logOf("/app.js", "/app.css", "/healthz") + combined("POST", "/x", 200) + "\n" + combined("GET", "/y", 404)
	_, err := ReadFrom(strings.NewReader(log), "access.log", Options{})
	want := "no request of access.log is left to replay after the filters: dropped 1 not GET (--log-keep methods), " +
		"1 not 2xx/304 (--log-keep errors), 2 static files (--log-keep static), 1 health checks (--log-keep health)"
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant  %s", err, want)
	}
}

func TestSummary(t *testing.T) {
	m := readString(t, timedLog()+"junk\n"+logOf("/x.png"), Options{})
	var out bytes.Buffer
	m.Summary(&out)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2+len(m.Routes) {
		t.Fatalf("summary:\n%s", out.String())
	}
	// Every line of the log is stamped in one second: no rate.
	if want := "load: 100 requests to PHP; all 100 requests stamped were logged in the same second"; !strings.HasPrefix(lines[len(lines)-1], want) {
		t.Errorf("load line %q, want %q...", lines[len(lines)-1], want)
	}
	for _, want := range []string{"access log access.log (combined): 102 lines, 101 parsed, 1 unparseable", "dropped 1 static files", "kept 100"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("counts line %q lacks %q", lines[0], want)
		}
	}
	if want := "50.0%       50 req     10 ms  requests+time GET /a/{n}  /a/1 (w 300), /a/2 (w 200)"; strings.TrimSpace(lines[1]) != want {
		t.Errorf("route line\n%q\nwant\n%q", strings.TrimSpace(lines[1]), want)
	}
}
