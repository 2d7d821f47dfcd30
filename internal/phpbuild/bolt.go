package phpbuild

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// BOLTPackages are the Debian packages of LLVM's post-link optimiser: llvm-bolt and merge-fdata, and the
// instrumentation runtime (libbolt_rt_instr.a), without which `llvm-bolt -instrument` fails.
var BOLTPackages = []string{"bolt-16", "libbolt-16-dev"}

// boltRoot is where Debian installs LLVM 16. llvm-bolt finds its runtime relative to its own path, so it is
// called there and not through the /usr/bin symlink.
const boltRoot = "/usr/lib/llvm-16"

// BOLT flags on top of the PGO build (CPython's recipe, docs/bolt.md): GCC's hot/cold splitting off (BOLT 16
// cannot patch split .cold fragments), static relocations kept for BOLT to move functions, and no PIE (the
// executor's computed-goto label table becomes dynamic relocations in a PIE, which BOLT before LLVM 20 rewrites
// wrongly). -g0: BOLT does not update the debug sections. Where each goes matters:
//   - BOLTCFlags in configure's CFLAGS, for every compile and link;
//   - BOLTProgramLDFlags in EXTRA_LDFLAGS_PROGRAM, which only the SAPI executables link with (-no-pie with
//     -shared would make opcache.so an executable, and configure's test programs link without LDFLAGS);
//   - BOLTMakeCFlags on make's command line (EXTRA_CFLAGS, which configure does not set): in CFLAGS, -fno-pie
//     objects would fail to link configure's (PIE) test programs.
//
// And no ifunc (BOLTNoIFunc): PHP picks its SIMD base64 and addslashes through GNU ifuncs, whose IRELATIVE PLT
// entries BOLT 16 maps wrongly. Every rewrite of such a php-cgi, even one without a profile, crashed at
// start-up here: its call to signal@plt landed in explicit_bzero. Without ifunc PHP resolves those functions
// through pointers at start-up instead.
const (
	BOLTCFlags         = "-O2 -g0 -fno-reorder-blocks-and-partition"
	BOLTProgramLDFlags = "-no-pie -Wl,--emit-relocs"
	BOLTMakeCFlags     = "-fno-pie"
	BOLTNoIFunc        = "ax_cv_have_func_attribute_ifunc=no"
)

// boltOptimise are the layout passes applied (docs/bolt.md tier A). Left out on purpose: -icf (PHP compares
// handler and function pointers), -frame-opt and shrink wrapping (the executor keeps state in global
// registers), -update-debug-sections (built -g0).
var boltOptimise = []string{"-reorder-blocks=ext-tsp", "-reorder-functions=hfsort+", "-split-functions",
	"-split-all-cold", "-split-eh", "-dyno-stats", "-use-gnu-stack"}

// BOLT is the located toolchain.
type BOLT struct {
	Bolt, Merge, Version string
}

// FindBOLT locates llvm-bolt, merge-fdata and the instrumentation runtime, or says which packages to install.
func FindBOLT(ctx context.Context) (BOLT, error) {
	b := BOLT{Bolt: filepath.Join(boltRoot, "bin", "llvm-bolt"), Merge: filepath.Join(boltRoot, "bin", "merge-fdata")}
	for _, p := range []string{b.Bolt, b.Merge, filepath.Join(boltRoot, "lib", "libbolt_rt_instr.a")} {
		if _, err := os.Stat(p); err != nil {
			return b, fmt.Errorf("BOLT is not installed (%s missing): install the Debian packages %s, or pass --install-deps",
				p, strings.Join(BOLTPackages, " "))
		}
	}
	out, err := exec.CommandContext(ctx, b.Bolt, "--version").Output()
	if err != nil {
		return b, fmt.Errorf("%s --version: %w", b.Bolt, err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "LLVM version") {
			b.Version = strings.TrimSpace(l)
			break
		}
	}
	return b, nil
}

// BOLTConfigure adds the BOLT compile and link flags to configure arguments, after any the user gave.
func BOLTConfigure(args []string) []string {
	out := append([]string{}, args...)
	for _, kv := range [][2]string{{"CFLAGS", BOLTCFlags}, {"EXTRA_LDFLAGS_PROGRAM", BOLTProgramLDFlags}} {
		found := false
		for i, a := range out {
			if v, ok := strings.CutPrefix(a, kv[0]+"="); ok {
				out[i] = kv[0] + "=" + strings.TrimSpace(v+" "+kv[1])
				found = true
			}
		}
		if !found {
			out = append(out, kv[0]+"="+kv[1])
		}
	}
	return append(out, BOLTNoIFunc)
}

// CheckBOLTInput says whether a binary can be rewritten by BOLT: an executable (not PIE) that kept its
// relocations and symbols. It returns GCC's split .cold fragments, which BOLT leaves unoptimised (a warning,
// not an error).
func CheckBOLTInput(path string) (cold []string, err error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if f.Type != elf.ET_EXEC {
		return nil, fmt.Errorf("%s is %v, not a fixed-address executable: it was built as PIE (BOLT 16 mis-rewrites PHP's computed gotos in a PIE)", path, f.Type)
	}
	if f.Section(".rela.text") == nil {
		return nil, fmt.Errorf("%s has no .rela.text: it was linked without -Wl,--emit-relocs", path)
	}
	if n := irelative(f); n > 0 {
		return nil, fmt.Errorf("%s has %d IRELATIVE (ifunc) relocations, which BOLT 16 mis-rewrites: configure with %s", path, n, BOLTNoIFunc)
	}
	syms, err := f.Symbols()
	if err != nil {
		return nil, fmt.Errorf("%s: no symbol table (stripped?): %w", path, err)
	}
	seen := map[string]bool{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && strings.Contains(s.Name, ".cold") && !seen[s.Name] {
			seen[s.Name] = true
			cold = append(cold, s.Name)
		}
	}
	sort.Strings(cold)
	return cold, nil
}

// irelative counts the R_X86_64_IRELATIVE relocations in a binary's .rela sections (ifunc'd calls).
func irelative(f *elf.File) int {
	n := 0
	for _, sec := range f.Sections {
		if sec.Type != elf.SHT_RELA || f.Class != elf.ELFCLASS64 || strings.HasPrefix(sec.Name, ".rela.text") {
			continue
		}
		b, err := sec.Data()
		if err != nil {
			continue
		}
		for i := 0; i+24 <= len(b); i += 24 {
			info := f.ByteOrder.Uint64(b[i+8:])
			if elf.R_X86_64(info&0xffffffff) == elf.R_X86_64_IRELATIVE {
				n++
			}
		}
	}
	return n
}

// boltTree runs the BOLT steps on a built tree: php-cgi is instrumented and trained with the app's requests
// (cgi), the profiles are merged, and both php-cgi and php-fpm are rewritten from that profile in place, the
// originals kept as *.prebolt. php-fpm is optimised with php-cgi's profile: both link the same objects, and
// BOLT 16's instrumentation shares its counters across fork (fixed in LLVM 17), so a forking php-fpm is not
// trained instrumented. It returns warnings for the manifest.
func boltTree(ctx context.Context, tc BOLT, tree, work string, train func(cgi string, log io.Writer) error,
	step func(name, logName string, f func(io.Writer) error) error) ([]string, error) {
	cgi := filepath.Join(tree, "sapi", "cgi", "php-cgi")
	fpm := filepath.Join(tree, "sapi", "fpm", "php-fpm")
	var warnings []string
	if err := step("bolt: check the binaries", "bolt.log", func(w io.Writer) error {
		for _, b := range []string{cgi, fpm} {
			cold, err := CheckBOLTInput(b)
			if err != nil {
				return err
			}
			if len(cold) > 0 {
				msg := fmt.Sprintf("%s: %d split .cold functions BOLT leaves as they are (e.g. %s)", filepath.Base(b), len(cold), cold[0])
				warnings = append(warnings, msg)
				fmt.Fprintln(w, msg)
			}
			fmt.Fprintf(w, "%s: fixed-address executable with relocations\n", b)
		}
		return nil
	}); err != nil {
		return warnings, err
	}
	inst := filepath.Join(work, "php-cgi.inst")
	prof := filepath.Join(work, "cgi")
	if err := step("bolt: instrument php-cgi", "bolt.log", func(w io.Writer) error {
		return runLogged(ctx, work, w, tc.Bolt, cgi, "-instrument", "-instrumentation-file="+prof,
			"-instrumentation-file-append-pid", "-instrumentation-binpath="+inst, "-o", inst)
	}); err != nil {
		return warnings, err
	}
	fdata := filepath.Join(work, "php-cgi.fdata")
	if err := step("bolt: train", "bolt-train.log", func(w io.Writer) error {
		if err := train(inst, w); err != nil {
			return err
		}
		parts, _ := filepath.Glob(prof + ".*.fdata")
		var nonEmpty []string
		for _, p := range parts {
			if st, err := os.Stat(p); err == nil && st.Size() > 0 {
				nonEmpty = append(nonEmpty, p)
			}
		}
		fmt.Fprintf(w, "\n%d BOLT profiles (%d written)\n", len(nonEmpty), len(parts))
		if len(nonEmpty) == 0 {
			return errors.New("the instrumented php-cgi wrote no profile (it writes one on a normal exit)")
		}
		out, err := os.Create(fdata)
		if err != nil {
			return err
		}
		cmd := command(ctx, work, nil, tc.Merge, nonEmpty...)
		cmd.Stdout, cmd.Stderr = out, w
		err = cmd.Run()
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("merge-fdata: %w", err)
		}
		return nil
	}); err != nil {
		return warnings, err
	}
	for _, b := range []string{cgi, fpm} {
		if err := step("bolt: optimise "+filepath.Base(b), "bolt.log", func(w io.Writer) error {
			pre := b + ".prebolt"
			if err := os.Rename(b, pre); err != nil {
				return err
			}
			args := append([]string{pre, "-o", b, "-data=" + fdata}, boltOptimise...)
			if err := runLogged(ctx, work, w, tc.Bolt, args...); err != nil {
				return err
			}
			// The rewritten binary must at least start: a broken rewrite crashes here, before any smoke test.
			return runLogged(ctx, work, w, b, "-v")
		}); err != nil {
			return warnings, err
		}
	}
	return warnings, nil
}
