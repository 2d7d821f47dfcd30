package phpbuild

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestBOLTConfigureAppendsToTheUsersFlags(t *testing.T) {
	got := BOLTConfigure([]string{"--enable-fpm", "CFLAGS=-O3 -march=native"})
	want := []string{"--enable-fpm", "CFLAGS=-O3 -march=native " + BOLTCFlags, "EXTRA_LDFLAGS_PROGRAM=" + BOLTProgramLDFlags, BOLTNoIFunc}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("BOLTConfigure = %q, want %q", got, want)
	}
	in := []string{"--enable-cgi"}
	if BOLTConfigure(in); len(in) != 1 {
		t.Fatal("BOLTConfigure changed its argument")
	}
}

// TestCheckBOLTInput links small programs the three ways that matter: PIE, no PIE without relocations, and
// the way BOLT needs them.
func TestCheckBOLTInput(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Fatal("no C compiler (Debian package build-essential): make test installs it")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "m.c")
	// A call to a cold function inside a loop: GCC splits that path into main.cold unless told not to.
	prog := `#include <stdio.h>
__attribute__((noinline, cold)) void rare(const char *s) { puts(s); }
int main(int c, char **v) {
	int s = 0;
	for (int i = 0; i < c * 1000; i++) { s += i; if (i == 77777) { rare(v[0]); printf("%d\n", s); } }
	return s & 1;
}
`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	link := func(name string, flags ...string) string {
		out := filepath.Join(dir, name)
		args := append(append([]string{"-O2"}, flags...), "-o", out, src)
		if b, err := exec.Command("cc", args...).CombinedOutput(); err != nil {
			t.Fatalf("cc %v: %v\n%s", args, err, b)
		}
		return out
	}
	if _, err := CheckBOLTInput(link("pie", "-fpie", "-pie")); err == nil || !strings.Contains(err.Error(), "PIE") {
		t.Errorf("PIE binary: err = %v, want the PIE explained", err)
	}
	if _, err := CheckBOLTInput(link("norelocs", "-fno-pie", "-no-pie")); err == nil || !strings.Contains(err.Error(), "--emit-relocs") {
		t.Errorf("binary without relocations: err = %v, want --emit-relocs named", err)
	}
	if cold, err := CheckBOLTInput(link("ok", strings.Fields(BOLTCFlags+" "+BOLTMakeCFlags+" "+BOLTProgramLDFlags)...)); err != nil || len(cold) > 0 {
		t.Errorf("binary built with the BOLT flags: cold %q, err %v; want neither", cold, err)
	}
	ifunc := filepath.Join(dir, "ifunc.c")
	prog = "static int impl(void) { return 0; }\nstatic void *resolve(void) { return (void *)impl; }\n" +
		"int f(void) __attribute__((ifunc(\"resolve\")));\nint main(void) { return f(); }\n"
	if err := os.WriteFile(ifunc, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	src = ifunc
	if _, err := CheckBOLTInput(link("ifunc", strings.Fields(BOLTCFlags+" "+BOLTMakeCFlags+" "+BOLTProgramLDFlags)...)); err == nil || !strings.Contains(err.Error(), BOLTNoIFunc) {
		t.Errorf("binary with an ifunc: err = %v, want the configure setting named", err)
	}
	src = filepath.Join(dir, "m.c")
	cold, err := CheckBOLTInput(link("split", "-O2", "-fno-pie", "-no-pie", "-Wl,--emit-relocs"))
	if err != nil || !reflect.DeepEqual(cold, []string{"main.cold"}) {
		t.Errorf("binary with GCC's hot/cold split: cold %q, err %v; want [main.cold]", cold, err)
	}
}
