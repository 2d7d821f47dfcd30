package phpbuild

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/workloads"
)

func TestAppEnv(t *testing.T) {
	a := App{Docroot: "/srv/app", Front: "index.php"}
	env := a.Env("GET", "/articles?page=2&sort=title")
	for _, want := range []string{"SCRIPT_FILENAME=/srv/app/index.php", "REQUEST_URI=/articles?page=2&sort=title",
		"QUERY_STRING=page=2&sort=title", "REQUEST_METHOD=GET", "SCRIPT_NAME=/index.php", "DOCUMENT_ROOT=/srv/app", "REDIRECT_STATUS=200"} {
		if !slices.Contains(env, want) {
			t.Errorf("env lacks %s: %v", want, env)
		}
	}
}

func TestParseElapsed(t *testing.T) {
	d, err := ParseElapsed("PHP Warning: x\n\nElapsed time: 1.250000 sec\n")
	if err != nil || d != 1250*time.Millisecond {
		t.Errorf("got %v, %v", d, err)
	}
	if d, err := ParseElapsed("\nElapsed time: 3 sec\n"); err != nil || d != 3*time.Second {
		t.Errorf("whole seconds: %v, %v", d, err)
	}
	if _, err := ParseElapsed("Status: 500\n"); err == nil {
		t.Error("no elapsed line accepted")
	}
}

func TestParseStatus(t *testing.T) {
	if s := ParseStatus([]byte("Status: 404 Not Found\r\nContent-type: text/html\r\n\r\nStatus: 500")); s != 404 {
		t.Errorf("status %d", s)
	}
	if s := ParseStatus([]byte("Content-type: text/html\r\n\r\nbody")); s != 200 {
		t.Errorf("no Status header: %d", s)
	}
}

func TestExtensionPlanForDemo(t *testing.T) {
	uses, err := ScanApp(workloads.Demo())
	if err != nil {
		t.Fatal(err)
	}
	if !uses["ctype"] || !uses["filter"] || uses["session"] || uses["mbstring"] || uses["tokenizer"] {
		t.Errorf("demo app uses %v: want ctype and filter only", uses)
	}
	all := map[string]bool{"ctype": true, "filter": true, "dom": true, "mbstring": true}
	noDev := func(string) bool { return false }
	p := PlanExtensions(all, uses, noDev)
	if strings.Join(p.Enabled, ",") != "ctype,filter" || len(p.LeftOut) != 0 {
		t.Errorf("plan %+v", p)
	}
	args := ConfigureArgs("/c/pgo-1", p, nil)
	want := "--prefix=/c/pgo-1 --disable-all --enable-fpm --enable-cgi --enable-opcache --enable-ctype --enable-filter"
	if strings.Join(args, " ") != want {
		t.Errorf("configure args\n%s\nwant\n%s", strings.Join(args, " "), want)
	}
	// An app using DOM on a machine without libxml2-dev, and filter that the installed PHP lacks.
	uses2 := map[string]bool{"dom": true, "filter": true, "mbstring": true}
	p2 := PlanExtensions(map[string]bool{"dom": true, "mbstring": true}, uses2, noDev)
	if strings.Join(p2.Enabled, ",") != "mbstring" || len(p2.LeftOut) != 2 {
		t.Fatalf("plan %+v", p2)
	}
	for _, l := range p2.LeftOut {
		if l.Name == "dom" && !strings.Contains(l.Reason, "libxml2-dev") || l.Name == "filter" && !strings.Contains(l.Reason, "php -m") {
			t.Errorf("left out %s: %s", l.Name, l.Reason)
		}
	}
	p3 := PlanExtensions(nil, map[string]bool{"dom": true}, func(string) bool { return true })
	if strings.Join(p3.Enabled, ",") != "dom,libxml" {
		t.Errorf("dom without libxml: %v", p3.Enabled)
	}
	// --configure-args override: phptune's prefix wins.
	o := ConfigureArgs("/c/b", p, []string{"--prefix=/usr", "--enable-mbstring"})
	if strings.Join(o, " ") != "--prefix=/c/b --enable-mbstring" {
		t.Errorf("override %v", o)
	}
	if m := parseModules("[PHP Modules]\nCore\nctype\nZend OPcache\n\n[Zend Modules]\nZend OPcache\n"); !m["ctype"] || !m["core"] || !m["zend opcache"] {
		t.Errorf("modules %v", m)
	}
	code := map[string]bool{}
	markUses("<?php function my_ctype_alpha() {} $x = \\mb_strlen($s);", code)
	if code["ctype"] || !code["mbstring"] {
		t.Errorf("marker matching: %v", code)
	}
}

func TestMissingPackagesAndVersions(t *testing.T) {
	look := func(p string) (string, error) {
		if p == "xz" || p == "valgrind" {
			return "", exec.ErrNotFound
		}
		return "/usr/bin/" + p, nil
	}
	got := MissingPackages([]string{"libxml2-dev", "zlib1g-dev"}, true, look, func(p string) bool { return p == "zlib1g-dev" })
	if strings.Join(got, " ") != "libxml2-dev valgrind xz-utils" {
		t.Errorf("missing %v", got)
	}
	if !versionLess("8.2.32", "8.2.36") || versionLess("8.2.36", "8.2.32") || versionLess("8.3.0", "8.2.36") {
		t.Error("versionLess")
	}
	if v := versionFromName("php8.2_8.2.32.orig.tar.xz"); v != "8.2.32" {
		t.Errorf("version from name %q", v)
	}
	if v := versionFromName("php-8.3.1.tar.gz"); v != "8.3.1" {
		t.Errorf("version from name %q", v)
	}
	if s := sourcesFile("bookworm"); !strings.Contains(s, "Types: deb-src") || !strings.Contains(s, "Suites: bookworm") {
		t.Errorf("sources %s", s)
	}
	a := strings.Join(aptArgs("/t/l.sources", "/t/lists"), " ")
	if a != "-o Dir::Etc::sourcelist=/t/l.sources -o Dir::Etc::sourceparts=- -o Dir::State::Lists=/t/lists" {
		t.Errorf("apt args %s", a)
	}
}

// debianCGI is Debian's php-cgi with opcache and ctype loaded by absolute path (it runs with -n).
func debianCGI(t *testing.T) (cgi string, ini []string) {
	t.Helper()
	cgi, err := exec.LookPath("php-cgi")
	if err != nil {
		t.Fatal("php-cgi not found: install Debian package php8.2-cgi (scripts/install-deps.sh does)")
	}
	oc, _ := filepath.Glob("/usr/lib/php/*/opcache.so")
	ct, _ := filepath.Glob("/usr/lib/php/*/ctype.so")
	if len(oc) == 0 || len(ct) == 0 {
		t.Fatal("Debian's opcache.so or ctype.so not found (packages php8.2-opcache, php8.2-common)")
	}
	return cgi, append(INI(oc[0], false), "extension="+ct[0])
}

func demoApp(t *testing.T) App {
	t.Helper()
	dir := t.TempDir()
	if err := stack.CopyFS(workloads.Demo(), dir); err != nil {
		t.Fatal(err)
	}
	return App{Docroot: dir, Front: "index.php"}
}

func TestCGIRunServesDemo(t *testing.T) {
	cgi, ini := debianCGI(t)
	app := demoApp(t)
	ctx := context.Background()
	res, err := CGIRun{CGI: cgi, INI: ini, Env: app.Env("GET", "/articles/7"), Warmup: 2, Repeats: 5, CPU: 0}.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 200 || !strings.Contains(string(res.Head), "phptune-demo:detail") || res.Elapsed <= 0 {
		t.Errorf("status %d, elapsed %v, head %.200s, stderr %s", res.Status, res.Elapsed, res.Head, res.Stderr)
	}
	res, err = CGIRun{CGI: cgi, INI: ini, Env: app.Env("GET", "/articles/99999"), Warmup: 0, Repeats: 1, CPU: -1}.Run(ctx)
	if err != nil || res.Status != 404 || !strings.Contains(string(res.Head), "phptune-demo:notfound") {
		t.Errorf("404 route: %v, status %d", err, res.Status)
	}
	if err := CheckResponse("/articles/99999", res); err != nil {
		t.Errorf("a 404 page is not an app error: %v", err)
	}
}

func TestTrainingStopsOnAppErrors(t *testing.T) {
	cgi, _ := debianCGI(t)
	for name, code := range map[string]string{
		"status 500": `<?php http_response_code(500); echo "down";`,
		"Fatal":      `<?php undefined_function_xyz();`,
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "index.php"), []byte(code), 0o644)
		tr := &CGITrainer{App: App{Docroot: dir, Front: "index.php"}, URLs: []string{"/"}, Repeats: 2}
		err := tr.Train(context.Background(), cgi, "", &strings.Builder{})
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: want a training error naming it, got %v", name, err)
		}
	}
}

func TestVerifyRoundsAndComparisons(t *testing.T) {
	cgi, ini := debianCGI(t)
	app := demoApp(t)
	guard := filepath.Join(t.TempDir(), "bench.php")
	os.WriteFile(guard, []byte(`<?php $s = 0; for ($i = 0; $i < 20000; $i++) { $s += $i % 7; } echo $s;`), 0o644)
	// Both arms are the same binary (the pipeline's logic is under test, not a gain).
	arms := []Arm{{Name: Baseline, CGI: cgi, INI: ini}, {Name: PGO, CGI: cgi, INI: ini}}
	cfg := VerifyConfig{App: app, Train: []string{"/", "/articles/7"}, Holdout: []string{"/api/articles/5"}, Guard: guard,
		Rounds: 6, Warmup: 1, Repeats: 3}
	var rounds []int
	cfg.OnRound = func(r, n int) { rounds = append(rounds, r) }
	res, done, err := Verify(context.Background(), arms, cfg, &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	// At most 6 rounds: fewer when every comparison is decided sooner.
	if done < 2 || done > 6 || len(rounds) != done {
		t.Fatalf("rounds done %d, reported %v", done, rounds)
	}
	for _, set := range SetNames {
		for _, a := range res {
			if n := len(a.Sets[set].TimesUS); n != done || a.Sets[set].Median <= 0 {
				t.Errorf("%s %s: %d times, median %v", a.Name, set, n, a.Sets[set].Median)
			}
		}
		c := res[1].Cmp[set]
		if c == nil || c.N != done || c.Verdict == "" {
			t.Errorf("%s: comparison %+v", set, c)
		}
	}
	r := &Result{Variants: []*VariantResult{{Name: Baseline}, {Name: PGO}}}
	fill(r, res)
	if g, ok := r.Variants[1].GainPct[SetTrain]; !ok || r.Variants[1].Verdict[SetTrain] == "" || r.Variants[0].GainPct != nil {
		t.Errorf("fill: gain %v %v, verdict %v, baseline gain %v", g, ok, r.Variants[1].Verdict, r.Variants[0].GainPct)
	}
	ci := r.Variants[1].GainCIPct[SetTrain]
	if !(ci[0] <= r.Variants[1].GainPct[SetTrain] && r.Variants[1].GainPct[SetTrain] <= ci[1]) {
		t.Errorf("gain %v outside its CI %v", r.Variants[1].GainPct[SetTrain], ci)
	}
}

// TestInstructionsPerRequest counts a request whose loop runs 20000 times and one whose loop runs 60000 times,
// through the verification's own runs (no php.ini, opcache and JIT on). Start-up counted into a request (millions
// of instructions) would break the proportion.
func TestInstructionsPerRequest(t *testing.T) {
	if _, err := exec.LookPath("valgrind"); err != nil {
		t.Fatal("valgrind not found: install Debian package valgrind (scripts/install-deps.sh does)")
	}
	cgi, _ := debianCGI(t)
	oc, _ := filepath.Glob("/usr/lib/php/*/opcache.so")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.php"), []byte(`<?php $s = 0; for ($i = 0; $i < (int)$_GET['n']; $i++) { $s += $i; } echo $s;`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := VerifyConfig{App: App{Docroot: dir, Front: "index.php"}, Train: []string{"/?n=20000"}, Holdout: []string{"/?n=60000"}, JIT: true}
	a := Arm{Name: "debian", CGI: cgi, Opcache: oc[0]}
	small, err := cfg.instructions(context.Background(), a, SetTrain)
	if err != nil {
		t.Fatal(err)
	}
	large, err := cfg.instructions(context.Background(), a, SetHoldout)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("instructions per request: %.0f for 20000 iterations, %.0f for 60000", small, large)
	// 40000 more iterations cost at least one instruction each, and the loop is most of each request.
	if large-small < 40000 || small <= 0 || large < 2*small {
		t.Errorf("instructions per request: %v for 20000 iterations, %v for 60000", small, large)
	}
}
