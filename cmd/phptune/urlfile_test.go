package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/load"
)

// A PHP app with a login on PHP's own sessions, a page only a logged-in user sees, and a form.
const loginApp = `<?php
$path = parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH);
if ($path === '/login') {
    session_start();
    if (($_POST['user'] ?? '') === 'admin' && ($_POST['pass'] ?? '') === 'secret') {
        $_SESSION['user'] = 'admin';
        header('Location: /account', true, 302);
        exit;
    }
    echo 'wrong password';
    exit;
}
if ($path === '/account') {
    session_start(['read_and_close' => true]);
    if (!isset($_SESSION['user'])) { http_response_code(403); echo 'log in first'; exit; }
    echo 'hello ' . $_SESSION['user'];
    exit;
}
if ($path === '/comment') {
    echo $_SERVER['REQUEST_METHOD'] . ' thanks for ' . strlen($_POST['text'] ?? '');
    exit;
}
echo 'home';
`

const loginURLs = `
login:
  path: /login
  form: {user: admin, pass: PASS}
  expect_status: 302
urls:
  - path: /account
    weight: 3
    expect: "hello admin"
  - path: /comment
    form: {text: hello}
    expect: "POST thanks for 5"
  - path: /
    anonymous: true
    expect: "^home$"
`

func writeURLFile(t *testing.T, pass string) string {
	p := filepath.Join(t.TempDir(), "urls.yaml")
	if err := os.WriteFile(p, []byte(strings.Replace(loginURLs, "PASS", pass, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestURLFileLogsIn: bench through nginx with a URL file: the login's session cookie goes with the logged-in
// page (which answers 403 without it), the form is posted, every response matches its own marker.
func TestURLFileLogsIn(t *testing.T) {
	_, info, _ := startServe(t, appOf(t, loginApp))
	r := phptune(t, "bench", info.HTTP, "--url-file", writeURLFile(t, "secret"), "-c", "2", "-n", "300", "--warmup", "0s", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var res load.Result
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Requests != 300 || res.Errors != 0 {
		t.Errorf("%d requests, %d errors %v: want 300 and none (every page with its marker)", res.Requests, res.Errors, res.ErrorSamples)
	}

	r = phptune(t, "bench", info.HTTP, "--url-file", writeURLFile(t, "wrong"), "-n", "10")
	if r.code != 2 || !strings.Contains(r.stderr, "login POST /login answered 200, not 302") {
		t.Errorf("wrong password: exit %d, stderr %q: want 2 and the failed login", r.code, r.stderr)
	}
}

// TestAccessLogMix: bench the demo with the mix of a gzipped access log: the mix is printed before the run
// (IDs collapsed, what was left out counted, the junk line shown), and every chosen URL answers.
func TestAccessLogMix(t *testing.T) {
	_, info, _ := startServe(t)
	var b strings.Builder
	for i := range 600 {
		uri, method, status := fmt.Sprintf("/articles/%d", 1+i%25), "GET", 200
		switch i % 10 {
		case 0:
			uri = "/api/articles"
		case 1:
			uri = "/static/site.css"
		case 2:
			method = "POST"
		case 3:
			uri, status = "/gone", 404
		case 4:
			uri = "/articles"
		}
		fmt.Fprintf(&b, "10.0.0.%d - - [10/Oct/2024:13:55:%02d +0000] \"%s %s HTTP/1.1\" %d 512 \"-\" \"curl/8\"\n", i%250, i%60, method, uri, status)
	}
	b.WriteString("\\x16\\x03\\x01 not a request\n")
	p := filepath.Join(t.TempDir(), "access.log.1.gz")
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(b.String()))
	w.Close()
	if err := os.WriteFile(p, gz.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	r := phptune(t, "bench", info.HTTP, "--from-access-log", p, "-c", "2", "-n", "200", "--warmup", "0s", "--expect-body", "phptune-demo")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"601 lines", "1 unparseable", "60 not GET", "60 not 2xx/304", "60 static files",
		"GET /articles/{n}", "GET /api/articles", "Errors        none"} {
		if !strings.Contains(r.stderr+r.stdout, want) {
			t.Errorf("no %q in the output:\n%s%s", want, r.stderr, r.stdout)
		}
	}
	r = phptune(t, "bench", info.HTTP, "--from-access-log", p, "--log-keep", "everything")
	if r.code != 2 || !strings.Contains(r.stderr, "--log-keep") {
		t.Errorf("a bad --log-keep: exit %d, stderr %q", r.code, r.stderr)
	}
	// compare's arms share the log given to compare: read and summarised once.
	r = phptune(t, "compare", "--interleave", "--rounds", "2", "-c", "2", "-d", "300ms", "--warmup", "0s",
		"--from-access-log", p, info.HTTP, info.HTTP)
	if r.code != 0 || strings.Count(r.stderr, "601 lines") != 1 {
		t.Errorf("compare with a log: exit %d, the summary %d times:\n%s", r.code, strings.Count(r.stderr, "601 lines"), r.stderr)
	}
}

// TestBuildTrainsOnTheLoggedMix: build's training list from an access log repeats each URL by its weight.
func TestBuildTrainsOnTheLoggedMix(t *testing.T) {
	p := filepath.Join(t.TempDir(), "access.log")
	var b strings.Builder
	for i := range 100 {
		uri := "/hot"
		if i%10 == 0 {
			uri = "/cold"
		}
		fmt.Fprintf(&b, "10.0.0.1 - - [10/Oct/2024:13:55:00 +0000] \"GET %s HTTP/1.1\" 200 512 \"-\" \"curl/8\"\n", uri)
	}
	os.WriteFile(p, []byte(b.String()), 0o600)
	m := mixFlags{accessLogs: []string{p}, logTop: 10}
	uris, err := m.trainingURIs(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	hot, cold := 0, 0
	for _, u := range uris {
		switch u {
		case "/hot":
			hot++
		case "/cold":
			cold++
		}
	}
	if hot != 10 || cold != 1 {
		t.Errorf("training list %v: want /hot 10 times and /cold once", uris)
	}
}
