package phpbuild

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Variant names.
const (
	Baseline = "baseline"
	PGO      = "pgo"
	PGOLTO   = "pgo+lto"
	PGOBOLT  = "pgo+bolt"
	Debian   = "debian"
)

// Variants are the variants phptune builds (build --variants, tune --build).
func Variants() []string { return []string{Baseline, PGO, PGOLTO, PGOBOLT} }

// DefaultProfFlags are the flags of the optimised PGO build: partial training keeps code the training did not
// reach optimised for speed instead of size (measured here: bench.php lost 6% instead of 36%).
const DefaultProfFlags = "-fprofile-use -fprofile-partial-training -fprofile-correction"

// Trainer runs the training workload with an instrumented build tree's php-cgi and opcache.so.
type Trainer interface {
	Train(ctx context.Context, cgi, opcache string, log io.Writer) error
	// Hash identifies the training inputs (app, URLs, ini) for the cache key.
	Hash() string
}

// Builder builds variants of one source into a cache.
type Builder struct {
	CacheDir  string
	Source    Source
	Configure []string // configure arguments without --prefix (ConfigureArgs minus its first element)
	Compiler  string   // CompilerVersion
	Jobs      int      // make -j; 0 = the number of CPUs
	Make      string   // the make program; "" = make
	// OnStep is told when a step starts (for the progress line).
	OnStep func(variant, step string)
}

// ErrNoProfiles is returned when training wrote no .gcda profile where the optimised build will look for it.
var ErrNoProfiles = errors.New("no PGO profiles")

// BuildError is a failed step with the log to look at.
type BuildError struct {
	Variant, Step, Log, Lines string
	// ProfileMismatch: GCC refused the training profile as not matching the code (anywhere in the log).
	ProfileMismatch bool
	Err             error
}

func (e *BuildError) Error() string {
	msg := fmt.Sprintf("%s: %s failed: %v (log %s)", e.Variant, e.Step, e.Err, e.Log)
	if e.Lines != "" {
		msg += "\n" + e.Lines
	}
	if e.ProfileMismatch {
		// GCC makes a profile that does not fit the code an error by default; say what that means.
		msg += "\nThe training profile does not match the code being compiled (GCC's coverage-mismatch): the source or " +
			"the flags changed between make prof-gen and the optimised build. Build again (a new profile is made), or " +
			"add -Wno-error=coverage-mismatch to --prof-flags to build with the profile anyway."
	}
	return msg
}
func (e *BuildError) Unwrap() error { return e.Err }

// Inputs returns the cache key inputs of a variant.
func (b *Builder) Inputs(variant, profFlags string, t Trainer) KeyInputs {
	in := KeyInputs{Source: b.Source.Hash, Variant: variant, Configure: b.Configure, Compiler: b.Compiler}
	if variant == PGOBOLT {
		in.Configure = BOLTConfigure(b.Configure)
		in.Tools = "EXTRA_CFLAGS=" + BOLTMakeCFlags + "; llvm-bolt " + boltRoot + " " + strings.Join(boltOptimise, " ")
	}
	if variant != Baseline {
		in.ProfFlags = profFlags
		if t != nil {
			in.Training = t.Hash()
		}
	}
	return in
}

// Cached returns the installed prefix of a variant when an earlier build with the same inputs exists.
func (b *Builder) Cached(variant, profFlags string, t Trainer) (Manifest, bool) {
	in := b.Inputs(variant, profFlags, t)
	m, err := ReadManifest(PrefixDir(b.CacheDir, variant, Key(in)))
	return m, err == nil
}

// Build builds and installs a variant (Baseline, or PGO trained by t with profFlags, plus LTO or BOLT) unless
// the cache holds it already. The prefix appears by one rename once everything is in it.
func (b *Builder) Build(ctx context.Context, variant, profFlags string, t Trainer) (Manifest, error) {
	lto, bolt := variant == PGOLTO, variant == PGOBOLT
	if variant != Baseline && variant != PGO && !lto && !bolt {
		return Manifest{}, fmt.Errorf("variant %s: not built by phptune", variant)
	}
	if variant != Baseline && t == nil {
		return Manifest{}, fmt.Errorf("%s: no training workload", variant)
	}
	if profFlags == "" {
		profFlags = DefaultProfFlags
	}
	in := b.Inputs(variant, profFlags, t)
	key := Key(in)
	prefix := PrefixDir(b.CacheDir, variant, key)
	if m, err := ReadManifest(prefix); err == nil {
		return m, nil
	}
	var tc BOLT // only a build needs BOLT: a cached pgo+bolt is used without it
	if bolt {
		var err error
		if tc, err = FindBOLT(ctx); err != nil {
			return Manifest{}, err
		}
	}
	logDir := filepath.Join(b.CacheDir, "logs", filepath.Base(prefix))
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return Manifest{}, err
	}
	tmp, err := os.MkdirTemp(b.CacheDir, ".build-"+filepath.Base(prefix)+"-")
	if err != nil {
		return Manifest{}, err
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "src")
	root := filepath.Join(tmp, "root")

	m := Manifest{Schema: "phptune/build-manifest/v1", Variant: variant, Key: key, Prefix: prefix, Inputs: in,
		Version: b.Source.Version, Origin: b.Source.Origin, LogDir: logDir}
	start := time.Now()
	jobs := b.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	mk := b.Make
	if mk == "" {
		mk = "make"
	}
	env := append(os.Environ(), "CCACHE_DISABLE=1", "LC_ALL=C")

	step := func(name, logName string, f func(log io.Writer) error) error {
		if b.OnStep != nil {
			b.OnStep(variant, name)
		}
		logPath := filepath.Join(logDir, logName)
		lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		t0 := time.Now()
		err = f(lf)
		lf.Close()
		m.Steps = append(m.Steps, Step{Name: name, Seconds: time.Since(t0).Seconds()})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &BuildError{Variant: variant, Step: name, Log: logPath, Lines: errorLines(logPath, 8),
				ProfileMismatch: len(ProfileWarnings(logPath)) > 0, Err: err}
		}
		return nil
	}
	makeArgs := func(extra ...string) []string {
		args := []string{fmt.Sprintf("-j%d", jobs)}
		if bolt {
			args = append(args, "EXTRA_CFLAGS="+BOLTMakeCFlags)
		}
		return append(args, extra...)
	}

	if err := step("unpack", "unpack.log", func(w io.Writer) error { return unpack(ctx, b.Source, src, w) }); err != nil {
		return m, err
	}
	args := append([]string{"--prefix=" + prefix}, in.Configure...)
	if err := step("configure", "configure.log", func(w io.Writer) error {
		return runEnv(ctx, src, env, w, "./configure", args...)
	}); err != nil {
		return m, err
	}
	if variant == Baseline {
		if err := step("make", "make.log", func(w io.Writer) error { return runEnv(ctx, src, env, w, mk, makeArgs()...) }); err != nil {
			return m, err
		}
	} else {
		if err := step("make prof-gen", "make-prof-gen.log", func(w io.Writer) error {
			return runEnv(ctx, src, env, w, mk, makeArgs("prof-gen")...)
		}); err != nil {
			return m, err
		}
		if err := step("train", "train.log", func(w io.Writer) error {
			return t.Train(ctx, filepath.Join(src, "sapi", "cgi", "php-cgi"), filepath.Join(src, "modules", "opcache.so"), w)
		}); err != nil {
			return m, err
		}
		if err := step("check profiles", "train.log", func(w io.Writer) error {
			n, err := CheckProfiles(src)
			fmt.Fprintf(w, "\n%d .gcda profiles\n", n)
			return err
		}); err != nil {
			return m, err
		}
		if err := step("make prof-clean", "make-prof-clean.log", func(w io.Writer) error {
			return runEnv(ctx, src, env, w, mk, "prof-clean")
		}); err != nil {
			return m, err
		}
		useArgs := []string{"PROF_FLAGS=" + profFlags}
		if lto {
			// LTO in the compiler command, so that libtool keeps it when it links (it drops -flto from
			// CFLAGS), and off for the files that hold the executor's global register variables (GCC PR 68384).
			if err := step("exclude the global register files from LTO", "make-prof-use.log", func(w io.Writer) error {
				cc, err := ExcludeFromLTO(filepath.Join(src, "Makefile"), w)
				if err == nil {
					useArgs = append(useArgs, "CC="+cc+" -flto=auto")
				}
				return err
			}); err != nil {
				return m, err
			}
		}
		// Not `make prof-use`: its recipe fixes PROF_FLAGS=-fprofile-use on the inner make's command line.
		useLog := filepath.Join(logDir, "make-prof-use.log")
		if err := step("make prof-use", "make-prof-use.log", func(w io.Writer) error {
			return runEnv(ctx, src, env, w, mk, makeArgs(append(useArgs, "all")...)...)
		}); err != nil {
			return m, err
		}
		m.Warnings = ProfileWarnings(useLog)
		if bolt {
			work := filepath.Join(tmp, "bolt")
			if err := os.MkdirAll(work, 0o755); err != nil {
				return m, err
			}
			// BOLT is trained with php-cgi alone (see boltTree), in live mode too.
			cgiT := t
			if lt, ok := t.(*LiveTrainer); ok {
				cgiT = lt.CGI
			}
			opcache := filepath.Join(src, "modules", "opcache.so")
			ws, err := boltTree(ctx, tc, src, work, func(cgi string, w io.Writer) error {
				return cgiT.Train(ctx, cgi, opcache, w)
			}, step)
			m.Warnings = append(m.Warnings, ws...)
			if err != nil {
				return m, err
			}
		}
	}
	if err := step("install", "install.log", func(w io.Writer) error {
		if err := runEnv(ctx, src, env, w, mk, "install", "INSTALL_ROOT="+root); err != nil {
			return err
		}
		staged := filepath.Join(root, prefix)
		guard := filepath.Join(staged, "lib", "phptune", "bench.php")
		if err := os.MkdirAll(filepath.Dir(guard), 0o755); err != nil {
			return err
		}
		if bench, err := os.ReadFile(filepath.Join(src, "Zend", "bench.php")); err == nil {
			if err := os.WriteFile(guard, bench, 0o644); err != nil {
				return err
			}
			m.GuardPath = filepath.Join(prefix, "lib", "phptune", "bench.php")
		}
		m.Seconds = time.Since(start).Seconds()
		mb, _ := json.MarshalIndent(m, "", "  ")
		if err := os.WriteFile(filepath.Join(staged, ManifestName), append(mb, '\n'), 0o644); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// A stale prefix without a manifest (from a crash in an older phptune) would block the rename.
		if _, err := os.Stat(prefix); err == nil {
			if err := os.RemoveAll(prefix); err != nil {
				return err
			}
		}
		return os.Rename(staged, prefix)
	}); err != nil {
		return m, err
	}
	return m, nil
}

// CheckProfiles counts the .gcda files in a build tree after training and fails unless the engine's core
// (Zend/zend_execute.gcda) has one: without it the optimised build would silently be a plain one.
func CheckProfiles(tree string) (int, error) {
	n := 0
	_ = filepath.WalkDir(tree, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".gcda") {
			n++
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(tree, "Zend", "zend_execute.gcda")); err != nil {
		return n, fmt.Errorf("%w: Zend/zend_execute.gcda missing after training (%d .gcda files): did the training requests run?", ErrNoProfiles, n)
	}
	return n, nil
}

// ProfileWarnings picks GCC's profile-mismatch warnings out of the optimised build's log. The ~290
// -Wmissing-profile warnings for the PIC copies in .libs/ that the SAPIs never link are harmless and skipped.
func ProfileWarnings(logPath string) []string {
	b, err := os.ReadFile(logPath)
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "coverage-mismatch]") || strings.Contains(l, "profile data may be corrupted") ||
			strings.Contains(l, "coverage mismatch") || strings.Contains(l, "-Wcoverage-invalid-line-number") {
			out = append(out, strings.TrimSpace(l))
		}
		if len(out) >= 20 {
			break
		}
	}
	return out
}

// globalRegisterFiles hold the executor's global register variables, which LTO cannot stream (GCC PR 68384).
var globalRegisterFiles = []string{"/Zend/zend_execute.c", "/ext/opcache/jit/zend_jit_vm_helpers.c"}

// ExcludeFromLTO appends -fno-lto to the compile rules of globalRegisterFiles in a configured tree's Makefile
// and returns the Makefile's C compiler command. It fails unless it found the engine's rule.
func ExcludeFromLTO(makefile string, log io.Writer) (string, error) {
	b, err := os.ReadFile(makefile)
	if err != nil {
		return "", err
	}
	lines := strings.Split(string(b), "\n")
	cc := ""
	found := map[string]bool{}
	for i, l := range lines {
		if strings.HasPrefix(l, "CC = ") {
			cc = strings.TrimSpace(strings.TrimPrefix(l, "CC = "))
		}
		if !strings.HasPrefix(l, "\t") || !strings.Contains(l, "--mode=compile") {
			continue
		}
		for _, f := range globalRegisterFiles {
			if !strings.Contains(l, f+" ") {
				continue
			}
			found[f] = true
			if !strings.HasSuffix(l, " -fno-lto") {
				lines[i] = l + " -fno-lto"
				fmt.Fprintf(log, "-fno-lto for %s\n", strings.TrimPrefix(f, "/"))
			}
		}
	}
	if cc == "" {
		return "", fmt.Errorf("%s has no CC line", makefile)
	}
	if !found[globalRegisterFiles[0]] {
		return "", fmt.Errorf("%s has no compile rule for %s", makefile, strings.TrimPrefix(globalRegisterFiles[0], "/"))
	}
	return cc, os.WriteFile(makefile, []byte(strings.Join(lines, "\n")), 0o644)
}
