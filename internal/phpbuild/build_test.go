package phpbuild

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A fake PHP source tree whose configure and make do what PHP's do to the file system, quickly: configure records
// the prefix, make install puts the programs under $INSTALL_ROOT/prefix. FAKE_FAIL=install makes install fail
// half-way (after writing some files); FAKE_FAIL=hang makes the build hang until killed.
const fakeConfigure = `#!/bin/sh
for a in "$@"; do case "$a" in --prefix=*) echo "${a#--prefix=}" > prefix.txt;; esac; done
echo "configure $*" >> "$FAKE_CALLS"
`

const fakeMake = `#!/bin/sh
echo "make $*" >> "$FAKE_CALLS"
case "$*" in
*install*)
	for a in "$@"; do case "$a" in INSTALL_ROOT=*) root="${a#INSTALL_ROOT=}";; esac; done
	p="$root$(cat prefix.txt)"
	mkdir -p "$p/sbin" "$p/bin" "$p/lib/php/extensions/no-debug-non-zts-20220829"
	echo fpm > "$p/sbin/php-fpm"
	if [ "$FAKE_FAIL" = install ]; then echo "cp: error: disk full" >&2; exit 1; fi
	echo cgi > "$p/bin/php-cgi"
	echo so > "$p/lib/php/extensions/no-debug-non-zts-20220829/opcache.so"
	chmod +x "$p/sbin/php-fpm" "$p/bin/php-cgi"
	;;
*prof-gen*)
	mkdir -p Zend sapi/cgi modules; echo cgi > sapi/cgi/php-cgi
	;;
*)
	if [ "$FAKE_FAIL" = hang ]; then sleep 60; fi
	if [ "$FAKE_FAIL" = make ]; then echo "Zend/zend.c:12:1: error: expected ';' before '}' token" >&2; exit 2; fi
	mkdir -p Zend; echo '<?php echo 1;' > Zend/bench.php
	;;
esac
`

type fakeEnv struct {
	cache, calls string
	src          Source
	mk           string
}

func newFake(t *testing.T) fakeEnv {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "php-src")
	if err := os.MkdirAll(filepath.Join(src, "main"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(p, s string, mode os.FileMode) {
		if err := os.WriteFile(p, []byte(s), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(src, "main", "php_version.h"), "#define PHP_VERSION \"8.2.32\"\n", 0o644)
	write(filepath.Join(src, "configure"), fakeConfigure, 0o755)
	mk := filepath.Join(dir, "fake-make")
	write(mk, fakeMake, 0o755)
	calls := filepath.Join(dir, "calls")
	t.Setenv("FAKE_CALLS", calls)
	s, err := LocalSource(src)
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != "8.2.32" || !s.Dir || s.Hash == "" {
		t.Fatalf("LocalSource: %+v", s)
	}
	return fakeEnv{cache: filepath.Join(dir, "cache"), calls: calls, src: s, mk: mk}
}

func (f fakeEnv) builder() *Builder {
	_ = os.MkdirAll(f.cache, 0o755)
	return &Builder{CacheDir: f.cache, Source: f.src, Configure: []string{"--disable-all"}, Compiler: "gcc 12", Make: f.mk, Jobs: 2}
}

func (f fakeEnv) makeCalls(t *testing.T) int {
	b, _ := os.ReadFile(f.calls)
	return strings.Count(string(b), "make ")
}

// leftovers lists what is in the cache besides logs and finished prefixes: temporary build trees.
func leftovers(t *testing.T, cache string) []string {
	t.Helper()
	ents, _ := os.ReadDir(cache)
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".build-") {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestBuildInstallsPrefixAndReusesIt(t *testing.T) {
	f := newFake(t)
	b := f.builder()
	var steps []string
	b.OnStep = func(v, s string) { steps = append(steps, s) }
	m, err := b.Build(context.Background(), Baseline, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(steps, ","); got != "unpack,configure,make,install" {
		t.Errorf("steps %s", got)
	}
	bins, err := PrefixBinaries(m.Prefix)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m.Prefix, f.cache) || bins.Opcache == "" || m.GuardPath == "" {
		t.Errorf("prefix %s, binaries %+v, guard %q", m.Prefix, bins, m.GuardPath)
	}
	if got, err := ReadManifest(m.Prefix); err != nil || got.Key != m.Key {
		t.Errorf("manifest %+v, %v", got, err)
	}
	if l := leftovers(t, f.cache); len(l) > 0 {
		t.Errorf("temporary trees left: %v", l)
	}
	calls := f.makeCalls(t)
	// Unchanged request: the cache answers, nothing runs.
	m2, err := b.Build(context.Background(), Baseline, "", nil)
	if err != nil || m2.Prefix != m.Prefix {
		t.Fatalf("second build: %v, prefix %s vs %s", err, m2.Prefix, m.Prefix)
	}
	if n := f.makeCalls(t); n != calls {
		t.Errorf("cached build ran make again (%d calls, was %d)", n, calls)
	}
	// Changed flags: a new prefix.
	b.Configure = []string{"--disable-all", "--enable-ctype"}
	m3, err := b.Build(context.Background(), Baseline, "", nil)
	if err != nil || m3.Prefix == m.Prefix {
		t.Errorf("changed configure args: %v, prefix %s (was %s)", err, m3.Prefix, m.Prefix)
	}
}

func TestBuildFailedInstallLeavesNoPrefix(t *testing.T) {
	f := newFake(t)
	t.Setenv("FAKE_FAIL", "install")
	b := f.builder()
	_, err := b.Build(context.Background(), Baseline, "", nil)
	var be *BuildError
	if !errors.As(err, &be) || be.Step != "install" {
		t.Fatalf("want a BuildError at install, got %v", err)
	}
	if !strings.Contains(be.Lines, "disk full") || !strings.HasSuffix(be.Log, "install.log") {
		t.Errorf("error lines %q, log %s", be.Lines, be.Log)
	}
	if _, ok := b.Cached(Baseline, "", nil); ok {
		t.Error("a failed install is reported cached")
	}
	ents, _ := os.ReadDir(f.cache)
	for _, e := range ents {
		if e.Name() != "logs" {
			t.Errorf("left in the cache: %s", e.Name())
		}
	}
}

func TestBuildMakeErrorShowsCompilerLine(t *testing.T) {
	f := newFake(t)
	t.Setenv("FAKE_FAIL", "make")
	_, err := f.builder().Build(context.Background(), Baseline, "", nil)
	if err == nil || !strings.Contains(err.Error(), "error: expected ';'") || !strings.Contains(err.Error(), "make.log") {
		t.Fatalf("want make's error line and log path, got %v", err)
	}
}

func TestBuildInterruptedLeavesNothing(t *testing.T) {
	f := newFake(t)
	t.Setenv("FAKE_FAIL", "hang")
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := f.builder().Build(ctx, Baseline, "", nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the context's error, got %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("interrupted build took %v to stop: the hanging make was not killed", d)
	}
	if l := leftovers(t, f.cache); len(l) > 0 {
		t.Errorf("temporary trees left: %v", l)
	}
	if _, ok := f.builder().Cached(Baseline, "", nil); ok {
		t.Error("an interrupted build is reported cached")
	}
}

type fakeTrainer struct {
	write bool
	runs  int
}

func (t *fakeTrainer) Hash() string { return "train-1" }
func (t *fakeTrainer) Train(ctx context.Context, cgi, opcache string, log io.Writer) error {
	t.runs++
	if !t.write {
		return nil
	}
	tree := filepath.Dir(filepath.Dir(filepath.Dir(cgi))) // sapi/cgi/php-cgi
	return os.WriteFile(filepath.Join(tree, "Zend", "zend_execute.gcda"), []byte("gcda"), 0o644)
}

func TestPGOStepsAndProfileCheck(t *testing.T) {
	f := newFake(t)
	b := f.builder()
	var steps []string
	b.OnStep = func(v, s string) { steps = append(steps, s) }
	tr := &fakeTrainer{write: true}
	m, err := b.Build(context.Background(), PGO, "", tr)
	if err != nil {
		t.Fatal(err)
	}
	want := "unpack,configure,make prof-gen,train,check profiles,make prof-clean,make prof-use,install"
	if got := strings.Join(steps, ","); got != want {
		t.Errorf("steps %s\nwant  %s", got, want)
	}
	calls, _ := os.ReadFile(f.calls)
	if !strings.Contains(string(calls), "PROF_FLAGS="+DefaultProfFlags+" all") {
		t.Errorf("the optimised build did not get the default PROF_FLAGS:\n%s", calls)
	}
	if m.Inputs.ProfFlags != DefaultProfFlags || m.Inputs.Training != "train-1" {
		t.Errorf("inputs %+v", m.Inputs)
	}

	// No profiles written: the build stops before the optimised build and installs nothing.
	f2 := newFake(t)
	_, err = f2.builder().Build(context.Background(), PGO, "-fprofile-use", &fakeTrainer{})
	if !errors.Is(err, ErrNoProfiles) {
		t.Fatalf("want ErrNoProfiles, got %v", err)
	}
	if c, _ := os.ReadFile(f2.calls); strings.Contains(string(c), "PROF_FLAGS") {
		t.Error("the optimised build ran without profiles")
	}
}

func TestCheckProfiles(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "Zend"), 0o755)
	os.WriteFile(filepath.Join(dir, "Zend", "zend_API.gcda"), nil, 0o644)
	if n, err := CheckProfiles(dir); !errors.Is(err, ErrNoProfiles) || n != 1 {
		t.Errorf("without zend_execute.gcda: %d, %v", n, err)
	}
	os.WriteFile(filepath.Join(dir, "Zend", "zend_execute.gcda"), nil, 0o644)
	if n, err := CheckProfiles(dir); err != nil || n != 2 {
		t.Errorf("with it: %d, %v", n, err)
	}
}

func TestKey(t *testing.T) {
	base := KeyInputs{Source: "s", Variant: PGO, Configure: []string{"--disable-all"}, ProfFlags: DefaultProfFlags, Compiler: "gcc 12", Training: "t"}
	k := Key(base)
	if k != Key(base) || len(k) != 16 {
		t.Fatalf("key %q not stable", k)
	}
	change := []func(*KeyInputs){
		func(i *KeyInputs) { i.Source = "s2" },
		func(i *KeyInputs) { i.Variant = Baseline },
		func(i *KeyInputs) { i.Configure = []string{"--disable-all", "--enable-ctype"} },
		func(i *KeyInputs) { i.ProfFlags = "-fprofile-use" },
		func(i *KeyInputs) { i.Compiler = "gcc 13" },
		func(i *KeyInputs) { i.Training = "t2" },
	}
	for n, c := range change {
		in := base
		c(&in)
		if Key(in) == k {
			t.Errorf("change %d does not change the key", n)
		}
	}
	// The baseline does not depend on training or PGO flags.
	b := &Builder{Source: Source{Hash: "s"}, Configure: []string{"--disable-all"}, Compiler: "gcc"}
	if Key(b.Inputs(Baseline, "x", &fakeTrainer{})) != Key(b.Inputs(Baseline, "y", nil)) {
		t.Error("the baseline key depends on training")
	}
	if PrefixDir("/c", PGOLTO, "k") != "/c/pgo-lto-k" {
		t.Errorf("prefix dir %s", PrefixDir("/c", PGOLTO, "k"))
	}
}

func TestPrefixINIAndCachedFPMs(t *testing.T) {
	f := newFake(t)
	b := f.builder()
	m, err := b.Build(context.Background(), Baseline, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	bins, err := PrefixBinaries(m.Prefix)
	if err != nil {
		t.Fatal(err)
	}
	if err := EnsureINI(bins); err != nil {
		t.Fatal(err)
	}
	ini, _ := os.ReadFile(filepath.Join(m.Prefix, "lib", "php.ini"))
	if !strings.Contains(string(ini), "zend_extension="+bins.Opcache) || !strings.Contains(string(ini), "opcache.enable=1") {
		t.Errorf("php.ini:\n%s", ini)
	}
	// Not offered before its smoke test passed.
	if l, err := CachedFPMs(f.cache); err != nil || len(l) != 0 {
		t.Errorf("before the smoke test: %v, %v", l, err)
	}
	if err := MarkSmokeOK(m.Prefix); err != nil {
		t.Fatal(err)
	}
	if l, err := CachedFPMs(f.cache); err != nil || len(l) != 1 || l[0] != bins.FPM {
		t.Errorf("after: %v, %v", l, err)
	}
}

// TestExcludeFromLTO: the two global-register files get -fno-lto in their compile rules, nothing else does,
// and a second pass changes nothing.
func TestExcludeFromLTO(t *testing.T) {
	dir := t.TempDir()
	mf := filepath.Join(dir, "Makefile")
	src := "CC = cc\nCFLAGS = -O2\n" +
		"Zend/zend_execute.lo: /s/Zend/zend_execute.c\n" +
		"\t$(LIBTOOL) --tag=CC --mode=compile $(CC) -IZend/ $(COMMON_FLAGS) -c /s/Zend/zend_execute.c -o Zend/zend_execute.lo  -MMD -MF Zend/zend_execute.dep -MT Zend/zend_execute.lo\n" +
		"Zend/zend_execute_API.lo: /s/Zend/zend_execute_API.c\n" +
		"\t$(LIBTOOL) --tag=CC --mode=compile $(CC) -IZend/ $(COMMON_FLAGS) -c /s/Zend/zend_execute_API.c -o Zend/zend_execute_API.lo  -MMD\n" +
		"ext/opcache/jit/zend_jit_vm_helpers.lo: /s/ext/opcache/jit/zend_jit_vm_helpers.c\n" +
		"\t$(LIBTOOL) --tag=CC --mode=compile $(CC) -Iext/opcache/ -c /s/ext/opcache/jit/zend_jit_vm_helpers.c -o ext/opcache/jit/zend_jit_vm_helpers.lo  -MMD\n"
	if err := os.WriteFile(mf, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for pass := 1; pass <= 2; pass++ {
		cc, err := ExcludeFromLTO(mf, io.Discard)
		if err != nil || cc != "cc" {
			t.Fatalf("pass %d: cc %q, %v", pass, cc, err)
		}
		b, _ := os.ReadFile(mf)
		if n := strings.Count(string(b), "-fno-lto"); n != 2 {
			t.Errorf("pass %d: %d -fno-lto, want 2:\n%s", pass, n, b)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "zend_execute_API.c -o") && strings.Contains(l, "-fno-lto") {
				t.Errorf("zend_execute_API.c excluded too: %s", l)
			}
		}
	}
	os.WriteFile(mf, []byte("CC = cc\nall:\n"), 0o644)
	if _, err := ExcludeFromLTO(mf, io.Discard); err == nil || !strings.Contains(err.Error(), "zend_execute.c") {
		t.Errorf("a Makefile without the engine's rule: %v", err)
	}
}

// TestGCCProfileMismatchIsSurfaced builds a program with a profile made for a version of its source whose lines
// have since moved, with GCC itself: as a warning the mismatch is among the build's warnings, and as the error it
// is by default the failed step says what it means.
func TestGCCProfileMismatchIsSurfaced(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Fatal("no C compiler (Debian package build-essential): make test installs it")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "f.c")
	body := "#include <stdio.h>\nint f(int x) { int s = 0; for (int i = 0; i < x; i++) s += i; return s; }\n" +
		"int main(int c, char **v) { printf(\"%d\\n\", f(c * 1000)); return 0; }\n"
	cc := func(log string, flags ...string) error {
		cmd := exec.Command("cc", append(append([]string{"-O2"}, flags...), "-o", filepath.Join(dir, "f"), src)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if log != "" {
			os.WriteFile(log, out, 0o644)
		} else if err != nil {
			t.Fatalf("cc %v: %v\n%s", flags, err, out)
		}
		return err
	}
	os.WriteFile(src, []byte(body), 0o644)
	cc("", "-fprofile-generate")
	if out, err := exec.Command(filepath.Join(dir, "f")).CombinedOutput(); err != nil {
		t.Fatalf("training run: %v %s", err, out)
	}
	os.WriteFile(src, []byte("\n\n"+body), 0o644)

	warnLog := filepath.Join(dir, "warn.log")
	if err := cc(warnLog, "-fprofile-use", "-fprofile-correction", "-Wno-error=coverage-mismatch"); err != nil {
		t.Fatalf("cc with the mismatch as a warning: %v", err)
	}
	if w := ProfileWarnings(warnLog); len(w) == 0 || !strings.Contains(strings.Join(w, "\n"), "profile data may be out of date") {
		t.Errorf("warnings %q: GCC's mismatch warning not picked up", w)
	}

	errLog := filepath.Join(dir, "make-prof-use.log")
	if cc(errLog, "-fprofile-use", "-fprofile-correction") == nil {
		t.Fatal("GCC accepted a mismatched profile without -Wno-error")
	}
	msg := (&BuildError{Variant: PGO, Step: "make prof-use", Log: errLog, Lines: errorLines(errLog, 8),
		ProfileMismatch: len(ProfileWarnings(errLog)) > 0, Err: errors.New("exit status 2")}).Error()
	for _, want := range []string{"-Werror=coverage-mismatch", "does not match the code being compiled", "-Wno-error=coverage-mismatch to --prof-flags", errLog} {
		if !strings.Contains(msg, want) {
			t.Errorf("failed step's message lacks %q:\n%s", want, msg)
		}
	}
}
