package stack

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// An app whose front controller writes into its writable dir, served with hard-linked files: the page works,
// the workers own the writable copy, and the read-only files are links to the original (no copy).
func TestWritableAndLinkedFiles(t *testing.T) {
	app := t.TempDir()
	os.Chmod(app, 0o755)
	write := func(rel, text string) {
		p := filepath.Join(app, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("index.php", `<?php
$f = __DIR__ . '/cache/hits.txt';
$n = (int) @file_get_contents($f) + 1;
if (file_put_contents($f, $n) === false) { http_response_code(500); exit('cannot write'); }
require __DIR__ . '/lib/greet.php';
echo greet($n);`)
	write("lib/greet.php", `<?php function greet($n) { return "hello $n"; }`)
	write("cache/seed.txt", "seed")
	s := startDemo(t, Config{App: app, Writable: []string{"cache"}, LinkFiles: true})

	// The health check may have counted already: each request adds one to what the last one saw.
	last := -1
	for i := 0; i < 2; i++ {
		resp, err := http.Get(s.HTTPURL)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		n, err := strconv.Atoi(strings.TrimPrefix(string(body), "hello "))
		if resp.StatusCode != 200 || err != nil || (last >= 0 && n != last+1) {
			t.Fatalf("request %d: %d %q: the workers cannot write the writable dir", i, resp.StatusCode, body)
		}
		last = n
	}
	inode := func(p string) (uint64, uint32) {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		sys := st.Sys().(*syscall.Stat_t)
		return sys.Ino, sys.Uid
	}
	origIno, _ := inode(filepath.Join(app, "lib", "greet.php"))
	servedIno, _ := inode(filepath.Join(s.Docroot, "lib", "greet.php"))
	if origIno != servedIno {
		t.Errorf("lib/greet.php was copied, not linked")
	}
	seedIno, _ := inode(filepath.Join(app, "cache", "seed.txt"))
	servedSeedIno, seedUID := inode(filepath.Join(s.Docroot, "cache", "seed.txt"))
	if seedIno == servedSeedIno {
		t.Errorf("a file of the writable dir was linked: handing it over would change the original")
	}
	if _, origUID := inode(filepath.Join(app, "cache", "seed.txt")); os.Geteuid() == 0 && origUID != 0 {
		t.Errorf("the original writable dir changed owner to %d", origUID)
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("www-data")
		if err == nil && strconv.Itoa(int(seedUID)) != u.Uid {
			t.Errorf("served cache/seed.txt is owned by %d, want www-data (%s)", seedUID, u.Uid)
		}
	}
	if err := startErr(Config{App: app, Writable: []string{"../etc"}}); err == nil || !strings.Contains(err.Error(), "outside the docroot") {
		t.Errorf("a writable path outside the docroot: %v", err)
	}
}

func startErr(cfg Config) error {
	s, err := Start(context.Background(), cfg)
	if err == nil {
		s.Stop(context.Background())
	}
	return err
}
