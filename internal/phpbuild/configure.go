package phpbuild

import (
	"context"
	"fmt"
	"io/fs"
	"os/exec"
	"slices"
	"sort"
	"strings"
)

// Extension is an extension phptune knows how to enable in a lean build.
type Extension struct {
	Name    string   // as `php -m` lists it, lower case
	Flag    string   // configure flag
	DevPkg  string   // Debian -dev package it needs; "" = bundled with PHP's sources
	Markers []string // functions or classes whose use in the app's code shows it needs the extension
}

// knownExtensions are the extensions a lean build (--disable-all) can add. Core, date, hash, json, pcre,
// random, Reflection, SPL and standard are always on; opcache is always enabled by phptune.
var knownExtensions = []Extension{
	{"ctype", "--enable-ctype", "", []string{"ctype_"}},
	{"filter", "--enable-filter", "", []string{"filter_var", "filter_input", "filter_has_var", "FILTER_"}},
	{"tokenizer", "--enable-tokenizer", "", []string{"token_get_all", "token_name", "PhpToken"}},
	{"session", "--enable-session", "", []string{"session_start", "$_SESSION", "session_id"}},
	{"posix", "--enable-posix", "", []string{"posix_"}},
	{"pcntl", "--enable-pcntl", "", []string{"pcntl_"}},
	{"sockets", "--enable-sockets", "", []string{"socket_create", "socket_connect"}},
	{"fileinfo", "--enable-fileinfo", "", []string{"finfo_", "mime_content_type", "finfo"}},
	{"calendar", "--enable-calendar", "", []string{"cal_days_in_month", "easter_date", "jdto", "gregoriantojd"}},
	{"exif", "--enable-exif", "", []string{"exif_"}},
	{"phar", "--enable-phar", "", []string{"Phar", "phar://"}},
	{"mbstring", "--enable-mbstring --disable-mbregex", "", []string{"mb_"}},
	{"bcmath", "--enable-bcmath", "", []string{"bcadd", "bcmul", "bcdiv", "bcsub", "bccomp"}},
	{"pdo", "--enable-pdo", "", []string{"PDO"}},
	{"pdo_sqlite", "--with-pdo-sqlite", "libsqlite3-dev", []string{"sqlite:"}},
	{"sqlite3", "--with-sqlite3", "libsqlite3-dev", []string{"SQLite3"}},
	{"libxml", "--with-libxml", "libxml2-dev", nil},
	{"dom", "--enable-dom", "libxml2-dev", []string{"DOMDocument", "DOMXPath"}},
	{"simplexml", "--enable-simplexml", "libxml2-dev", []string{"simplexml_", "SimpleXMLElement"}},
	{"xml", "--enable-xml", "libxml2-dev", []string{"xml_parser_create", "xml_parse"}},
	{"xmlreader", "--enable-xmlreader", "libxml2-dev", []string{"XMLReader"}},
	{"xmlwriter", "--enable-xmlwriter", "libxml2-dev", []string{"XMLWriter"}},
	{"zlib", "--with-zlib", "zlib1g-dev", []string{"gzcompress", "gzencode", "gzdecode", "gzinflate", "gzdeflate", "gzopen", "ob_gzhandler"}},
	{"openssl", "--with-openssl", "libssl-dev", []string{"openssl_"}},
	{"curl", "--with-curl", "libcurl4-openssl-dev", []string{"curl_"}},
	{"iconv", "--with-iconv", "", []string{"iconv"}},
	{"sodium", "--with-sodium", "libsodium-dev", []string{"sodium_"}},
	{"intl", "--enable-intl", "libicu-dev", []string{"Normalizer", "NumberFormatter", "Collator", "IntlDateFormatter", "grapheme_"}},
	{"gd", "--enable-gd", "libpng-dev", []string{"imagecreate", "gd_info"}},
	{"mysqli", "--with-mysqli", "", []string{"mysqli"}},
	{"pdo_mysql", "--with-pdo-mysql", "", []string{"mysql:"}},
}

// LeanBase is the configure line every build starts from: no extensions but opcache, and the SAPIs fpm and cgi.
var LeanBase = []string{"--disable-all", "--enable-fpm", "--enable-cgi", "--enable-opcache"}

// LeftOut is an extension the app seems to need that the build does not get, and why.
type LeftOut struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// ExtensionPlan is the derived set of extensions.
type ExtensionPlan struct {
	Enabled []string  `json:"enabled"`
	LeftOut []LeftOut `json:"left_out,omitempty"`
}

// PlanExtensions picks the extensions to build: those the installed PHP has (installed, from `php -m`) and the
// app's code uses (uses, from ScanApp), limited to those whose Debian -dev package is installed (devInstalled).
// Extensions the app uses that the installed PHP lacks, or whose -dev package is missing, are left out with
// a reason.
func PlanExtensions(installed, uses map[string]bool, devInstalled func(pkg string) bool) ExtensionPlan {
	var p ExtensionPlan
	for _, e := range knownExtensions {
		if !uses[e.Name] {
			continue
		}
		switch {
		case installed != nil && !installed[e.Name]:
			p.LeftOut = append(p.LeftOut, LeftOut{e.Name, "the installed PHP does not load it (php -m)"})
		case e.DevPkg != "" && !devInstalled(e.DevPkg):
			p.LeftOut = append(p.LeftOut, LeftOut{e.Name, "needs Debian package " + e.DevPkg + " (--install-deps installs it)"})
		default:
			p.Enabled = append(p.Enabled, e.Name)
		}
	}
	// dom, simplexml, xml... need libxml itself enabled.
	for _, n := range p.Enabled {
		if e := extension(n); e.DevPkg == "libxml2-dev" && n != "libxml" && !slices.Contains(p.Enabled, "libxml") {
			p.Enabled = append(p.Enabled, "libxml")
		}
	}
	sort.Strings(p.Enabled)
	return p
}

// ConfigureArgs is the configure command line for prefix: override (from --configure-args) when given,
// else the lean base plus the planned extensions. --prefix is always phptune's.
func ConfigureArgs(prefix string, plan ExtensionPlan, override []string) []string {
	args := []string{"--prefix=" + prefix}
	if override != nil {
		for _, a := range override {
			if !strings.HasPrefix(a, "--prefix=") {
				args = append(args, a)
			}
		}
		return args
	}
	args = append(args, LeanBase...)
	for _, n := range plan.Enabled {
		args = append(args, strings.Fields(extension(n).Flag)...)
	}
	return args
}

func extension(name string) Extension {
	for _, e := range knownExtensions {
		if e.Name == name {
			return e
		}
	}
	return Extension{}
}

// InstalledModules runs `php -m` and returns its module names, lower case.
func InstalledModules(ctx context.Context, php string) (map[string]bool, error) {
	out, err := exec.CommandContext(ctx, php, "-m").Output()
	if err != nil {
		return nil, fmt.Errorf("%s -m: %w", php, err)
	}
	return parseModules(string(out)), nil
}

func parseModules(out string) map[string]bool {
	m := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "[") {
			continue
		}
		m[strings.ToLower(l)] = true
	}
	return m
}

// ScanApp reports which known extensions the app's PHP code (*.php, *.phtml, *.inc) mentions.
func ScanApp(app fs.FS) (map[string]bool, error) {
	uses := map[string]bool{}
	err := fs.WalkDir(app, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "vendor" && p != "." {
				// Libraries ship polyfills and optional paths for many extensions: count only the app's own code.
				return fs.SkipDir
			}
			return nil
		}
		if !(strings.HasSuffix(p, ".php") || strings.HasSuffix(p, ".phtml") || strings.HasSuffix(p, ".inc")) {
			return nil
		}
		b, err := fs.ReadFile(app, p)
		if err != nil {
			return err
		}
		markUses(string(b), uses)
		return nil
	})
	return uses, err
}

func markUses(code string, uses map[string]bool) {
	for _, e := range knownExtensions {
		if uses[e.Name] {
			continue
		}
		for _, m := range e.Markers {
			if strings.Contains(code, m) && wordUse(code, m) {
				uses[e.Name] = true
				break
			}
		}
	}
}

// wordUse requires the marker to start an identifier (so "my_ctype_x" does not count for ctype_).
func wordUse(code, m string) bool {
	for i := 0; ; {
		j := strings.Index(code[i:], m)
		if j < 0 {
			return false
		}
		at := i + j
		if at == 0 || !isIdent(code[at-1]) {
			return true
		}
		i = at + 1
	}
}

func isIdent(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
