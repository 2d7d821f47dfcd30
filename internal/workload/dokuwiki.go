package workload

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Topics of the seeded pages and posts: what a PHP team writes about, so searches find something.
var topics = []string{
	"opcache memory", "pool sizing", "slow log", "JIT on real code", "unix sockets", "keep-alive to php-fpm",
	"PGO builds", "realpath cache", "session locking", "preloading", "huge pages", "max_requests and leaks",
	"static vs dynamic pm", "nginx buffers", "database round trips", "template caching", "autoloader cost",
	"object cache", "queue workers", "HTTP/2 in front", "TLS termination", "CDN headers", "image resizing",
	"cron in production", "log rotation", "deploy without downtime", "health checks", "memory_limit",
	"error pages that are fast", "benchmarks that lie",
}

func dokuwikiPreset() *Preset {
	return &Preset{
		Name:     "dokuwiki",
		Summary:  "DokuWiki (no database) with 30 seeded pages and a built search index",
		Packages: []string{"dokuwiki", "php8.2-xml"},
		Front:    "doku.php",
		Revision: 1,
		Writable: []string{"data"},
		URLs: []URL{
			{Path: "/doku.php?id=start", Weight: 2, Marker: `Tuning notes index`},
			{Path: "/doku.php?id=tuning:note_07", Weight: 3, Marker: `Note 7: PGO builds`},
			{Path: "/doku.php?do=search&id=start&q=opcache", Weight: 1, Marker: `id=tuning:note_01&amp;s\[\]=opcache`},
		},
		provision: provisionDokuWiki,
	}
}

func provisionDokuWiki(ctx context.Context, p *Prep) error {
	doc := p.Docroot()
	fmt.Fprintf(p.Log, "copying DokuWiki from /usr/share/dokuwiki\n")
	// install.php is the browser installer, not needed; preload.php points Debian's copy at /etc/dokuwiki.
	if err := copyTree("/usr/share/dokuwiki", doc, map[string]bool{"install.php": true, "inc/preload.php": true, ".htaccess": true}); err != nil {
		return fmt.Errorf("copy /usr/share/dokuwiki: %w", err)
	}
	if err := copyTree("/etc/dokuwiki", filepath.Join(doc, "conf"), map[string]bool{"farm": true, "local.php": true, "local.protected.php": true, "preload.php": true}); err != nil {
		return fmt.Errorf("copy /etc/dokuwiki: %w", err)
	}
	if _, err := os.Stat(filepath.Join(doc, "conf", "dokuwiki.php")); err != nil {
		return fmt.Errorf("DokuWiki's default configuration is missing from /etc/dokuwiki (is the dokuwiki package configured? dpkg --configure -a)")
	}
	// A fresh data dir: the package's skeleton without its sample pages' caches.
	if err := copyTree("/var/lib/dokuwiki/data", filepath.Join(doc, "data"), map[string]bool{"cache": true, "index": true, "locks": true, "tmp": true}); err != nil {
		return fmt.Errorf("copy /var/lib/dokuwiki/data: %w", err)
	}
	for _, d := range []string{"cache", "index", "locks", "tmp", "attic", "meta", "media_attic", "media_meta", "log"} {
		if err := os.MkdirAll(filepath.Join(doc, "data", d), 0o755); err != nil {
			return err
		}
	}
	local := `<?php
// written by phptune workload prepare
$conf['title'] = 'phptune wiki';
$conf['savedir'] = DOKU_INC.'data';
$conf['useacl'] = 0;
$conf['userewrite'] = 0;
$conf['updatecheck'] = 0;
$conf['start'] = 'start';
$conf['template'] = 'dokuwiki';
`
	if err := writeFile(filepath.Join(doc, "conf", "local.php"), []byte(local), 0o644); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(doc, "inc", "preload.php"), []byte("<?php\n// phptune: the configuration lives in DOKU_INC/conf\n"), 0o644); err != nil {
		return err
	}
	// The pages: a start page that lists them and 30 notes with sections, lists, code and links.
	var start strings.Builder
	start.WriteString("====== Tuning notes index ======\n\nNotes of a PHP team on running its stack.\n\n")
	for i, t := range topics {
		n := i + 1
		fmt.Fprintf(&start, "  * [[tuning:note_%02d|Note %d: %s]]\n", n, n, t)
		var b strings.Builder
		fmt.Fprintf(&b, "====== Note %d: %s ======\n\n", n, t)
		for s := 1; s <= 4; s++ {
			fmt.Fprintf(&b, "===== Section %d =====\n\n", s)
			fmt.Fprintf(&b, "What we measured about **%s** on the staging hosts, round %d. The effect depends on the "+
				"application: a framework that includes hundreds of files gains most from opcache, while an app that "+
				"waits on its database gains from a larger pool. See [[tuning:note_%02d]] and [[start]].\n\n", t, s, (n%len(topics))+1)
			b.WriteString("  * measure before changing anything\n  * change one setting at a time\n  * compare interleaved trials\n\n")
			fmt.Fprintf(&b, "<code php>\n$cfg = ['topic' => '%s', 'round' => %d];\necho json_encode($cfg);\n</code>\n\n", t, s)
			b.WriteString("^ setting ^ before ^ after ^\n| requests/s | 100 | 112 |\n| p99 (ms) | 40 | 31 |\n\n")
		}
		if err := writeFile(filepath.Join(doc, "data", "pages", "tuning", fmt.Sprintf("note_%02d.txt", n)), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	if err := writeFile(filepath.Join(doc, "data", "pages", "start.txt"), []byte(start.String()), 0o644); err != nil {
		return err
	}
	// The search index, built as DokuWiki's own indexer would build it from the web.
	fmt.Fprintf(p.Log, "building DokuWiki's search index\n")
	if _, err := php(ctx, doc, nil, `<?php
if (!defined('DOKU_INC')) define('DOKU_INC', `+phpString(doc+"/")+`);
$argv = ['indexer.php', '-q']; $_SERVER['argv'] = $argv; $argc = 2;
require DOKU_INC.'bin/indexer.php';
`); err != nil {
		return fmt.Errorf("build the search index: %w", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(doc, "data", "index")); len(entries) == 0 {
		return fmt.Errorf("build the search index: DokuWiki's indexer wrote nothing to data/index")
	}
	return nil
}

// phpString quotes s as a PHP single-quoted string.
func phpString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
