package workload

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/phptune/phptune/internal/stack"
)

func mediawikiPreset() *Preset {
	return &Preset{
		Name:     "mediawiki",
		Summary:  "MediaWiki on SQLite with 40 seeded pages (templates, tables, links), APCu object cache, skin Vector",
		Packages: []string{"mediawiki", "php8.2-sqlite3", "php8.2-intl", "php8.2-mbstring", "php8.2-xml", "php8.2-apcu"},
		Front:    "index.php",
		Revision: 2,
		Writable: []string{"data", "cache", "images"},
		URLs: []URL{
			{Path: "/index.php?title=Tuning_note_7", Weight: 3, Marker: `phptune-infobox[\s\S]*Note 7: PGO builds`},
			{Path: "/index.php?title=Main_Page", Weight: 2, Marker: `Tuning notes index[\s\S]*Tuning note 40`},
		},
		provision: provisionMediaWiki,
	}
}

// mwI18n and mwKeep trim the copy of /usr/share/mediawiki: no bundled extensions (a plain wiki loads none), and of the
// translations only English (en.json, and qqq.json that documents the messages). 84 MB in 8,000 files instead
// of 284 MB in 36,000: every served copy costs a third.
var mwI18n = regexp.MustCompile(`(^|/)i18n(/.*)?/[^/]+\.json$`)

func mwKeep(rel string) bool {
	if rel == "extensions" || rel == "extensions-core" || rel == "LocalSettings.php" || rel == "mw-config" ||
		rel == "images" || rel == "config" || rel == "tests" || rel == "docs" {
		return false
	}
	if mwI18n.MatchString(rel) {
		base := filepath.Base(rel)
		return base == "en.json" || base == "qqq.json"
	}
	return true
}

func provisionMediaWiki(ctx context.Context, p *Prep) error {
	doc := p.Docroot()
	fmt.Fprintf(p.Log, "copying MediaWiki from /usr/share/mediawiki (English only, no bundled extensions)\n")
	if err := stack.CopyKeep("/usr/share/mediawiki", doc, mwKeep); err != nil {
		return fmt.Errorf("copy /usr/share/mediawiki: %w", err)
	}
	for _, d := range []string{"data", "cache", "images"} {
		if err := os.MkdirAll(filepath.Join(doc, d), 0o755); err != nil {
			return err
		}
	}
	fmt.Fprintf(p.Log, "installing the wiki on SQLite (maintenance/install.php)\n")
	pass := "Phptune-" + randomHex(8)
	if _, err := run(ctx, doc, os.Environ(), "php", "maintenance/install.php", "--dbtype", "sqlite", "--dbpath", filepath.Join(doc, "data"),
		"--dbname", "wiki", "--server", "http://localhost", "--scriptpath", "", "--lang", "en", "--skins", "Vector",
		"--pass", pass, "--confpath", doc, "phptune wiki", "Admin"); err != nil {
		return fmt.Errorf("maintenance/install.php: %w", err)
	}
	ls, err := os.ReadFile(filepath.Join(doc, "LocalSettings.php"))
	if err != nil {
		return fmt.Errorf("install.php wrote no LocalSettings.php: %w", err)
	}
	// Paths follow the served copy, the server follows the port, and nothing runs behind the measurements.
	settings := strings.ReplaceAll(string(ls), "\""+filepath.Join(doc, "data")+"\"", "__DIR__ . \"/data\"")
	settings += `
# phptune workload prepare: paths follow the served copy, the server follows the port.
$wgServer = 'http://' . ( $_SERVER['HTTP_HOST'] ?? 'localhost' );
$wgSQLiteDataDir = __DIR__ . '/data';
$wgCacheDirectory = __DIR__ . '/cache';
$wgUploadDirectory = __DIR__ . '/images';
$wgMainCacheType = CACHE_ACCEL;
$wgParserCacheType = CACHE_ACCEL;
$wgMessageCacheType = CACHE_ACCEL;
$wgSessionCacheType = CACHE_ACCEL;
$wgJobRunRate = 0;
$wgEnableUploads = false;
$wgUseInstantCommons = false;
$wgPingback = false;
`
	if err := writeFile(filepath.Join(doc, "LocalSettings.php"), []byte(settings), 0o644); err != nil {
		return err
	}
	// The pages: an infobox template, 40 notes that use it, and a main page that lists them.
	pages := filepath.Join(p.Dir, "pages")
	defer os.RemoveAll(pages)
	write := func(title, text string) error {
		return writeFile(filepath.Join(pages, title), []byte(text), 0o644)
	}
	if err := write("Template:Infobox note", `<div class="phptune-infobox" style="float:right;border:1px solid #aaa;padding:4px">
'''{{{title}}}'''<br/>Topic: {{{topic}}}<br/>Effect: {{{effect|unknown}}}
</div><noinclude>An infobox for tuning notes.</noinclude>`); err != nil {
		return err
	}
	var main strings.Builder
	main.WriteString("== Tuning notes index ==\nNotes of a PHP team on running its stack.\n\n")
	for i := 1; i <= 40; i++ {
		t := topics[(i-1)%len(topics)]
		fmt.Fprintf(&main, "* [[Tuning note %d|Note %d: %s]]\n", i, i, t)
		var b strings.Builder
		fmt.Fprintf(&b, "{{Infobox note|title=Note %d: %s|topic=%s|effect=+%d%%}}\n", i, t, t, i%13+1)
		fmt.Fprintf(&b, "'''Note %d: %s''' collects what we measured.\n\n", i, t)
		for s := 1; s <= 5; s++ {
			fmt.Fprintf(&b, "== Part %d ==\nWhat we measured about '''%s''', round %d. See [[Tuning note %d]] and [[Main Page]].\n\n", s, t, s, i%40+1)
			b.WriteString("{| class=\"wikitable\"\n! setting !! before !! after\n|-\n| requests/s || 100 || 112\n|-\n| p99 (ms) || 40 || 31\n|}\n\n")
			b.WriteString("* measure before changing anything\n* change one setting at a time\n* compare interleaved trials\n\n")
		}
		fmt.Fprintf(&b, "[[Category:Tuning notes]]\n[[Category:Round %d]]\n", i%4+1)
		if err := write(fmt.Sprintf("Tuning note %d", i), b.String()); err != nil {
			return err
		}
	}
	if err := write("Main Page", main.String()); err != nil {
		return err
	}
	entries, err := os.ReadDir(pages)
	if err != nil {
		return err
	}
	args := []string{"maintenance/importTextFiles.php", "--overwrite", "--rc", "-s", "phptune seed"}
	for _, e := range entries {
		args = append(args, filepath.Join(pages, e.Name()))
	}
	fmt.Fprintf(p.Log, "importing %d pages (maintenance/importTextFiles.php)\n", len(entries))
	if _, err := run(ctx, doc, os.Environ(), "php", args...); err != nil {
		return fmt.Errorf("import the pages: %w", err)
	}
	if _, err := run(ctx, doc, os.Environ(), "php", "maintenance/runJobs.php", "--quiet"); err != nil {
		return fmt.Errorf("run the link-update jobs: %w", err)
	}
	return nil
}
