package knob

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/phpini"
	"github.com/phptune/phptune/internal/stack"
)

// What a run is told of its starting point and its knobs, as a command's flags give it: the start's files and
// --ini settings, --knob NAME=V1,V2 (values to race, or one value to pin), --skip and --only.

// Start is the starting configuration: Debian's pool, or the user's --from-pool, --from-apache and --from-ini
// files, with --ini KEY=VALUE settings over it; pins gets each setting (nil: not recorded).
func Start(fromPool, prefix, fromINI, fromApache string, inis []string, pins map[string]string) (Config, error) {
	base := Debian()
	if fromPool != "" {
		if err := base.FromPoolFileAt(fromPool, prefix); err != nil {
			return base, err
		}
	}
	if fromApache != "" {
		if err := base.FromApacheFile(fromApache); err != nil {
			return base, err
		}
	}
	if fromINI != "" {
		if err := base.FromINIFile(fromINI); err != nil {
			return base, err
		}
	}
	for _, kv := range inis {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return base, exitcode.UsageErrorf("--ini %q: want KEY=VALUE", kv)
		}
		base.SetSetting(k, v)
		if pins != nil {
			pins[k] = v
			if k == "opcache.enable" {
				pins["opcache"] = v
			}
		}
	}
	return base, nil
}

// StartName is what the headline calls the starting point base: your configuration when read from files, else
// Debian's defaults, or your starting point where --knob or --ini changed them (the PHP binary aside).
func StartName(fromFiles bool, base Config) string {
	debian := Debian()
	debian.PHPFPM = base.PHPFPM
	switch {
	case fromFiles:
		return "your configuration"
	case base.Key() != debian.Key():
		return "your starting point"
	}
	return "Debian's defaults"
}

// PreloadScript is the app's own opcache preload script, relative to the docroot ("" = none).
func PreloadScript(sc stack.Config) string {
	for _, p := range []string{"preload.php", "config/preload.php"} {
		if sc.AppFS != nil {
			if _, err := fs.Stat(sc.AppFS, p); err == nil {
				return p
			}
		} else if st, err := os.Stat(filepath.Join(sc.App, p)); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// CheckNames refuses the names of --knob and --compare (each value NAME=...) and of --ini (KEY=VALUE) that
// would set nothing in fpmBin: PHP's ini directives are read once, only when a name is not a knob's.
func CheckNames(ctx context.Context, fpmBin string, known []Knob, knobFlags map[string][]string, inis []string) error {
	var dirs []string
	directives := func() ([]string, error) {
		if dirs != nil {
			return dirs, nil
		}
		bin, err := stack.FindPHPFPM(fpmBin)
		if err != nil {
			return nil, err
		}
		dirs, err = phpini.Directives(ctx, bin)
		return dirs, err
	}
	for _, flag := range []string{"--knob", "--compare"} {
		for _, kv := range knobFlags[flag] {
			// A value without = is told what to give where it is parsed.
			if name, _, ok := strings.Cut(kv, "="); ok && name != "" {
				if err := CheckName(flag, name, known, true, directives); err != nil {
					return err
				}
			}
		}
	}
	for _, kv := range inis {
		if name, _, ok := strings.Cut(kv, "="); ok && name != "" {
			if err := CheckName("--ini", name, known, false, directives); err != nil {
				return err
			}
		}
	}
	return nil
}

// SetNamed applies NAME=VALUE, given to flag, to c: a knob of known, or any ini setting.
func SetNamed(c *Config, known []Knob, flag, kv string) error {
	name, val, ok := strings.Cut(kv, "=")
	if !ok || name == "" {
		return exitcode.UsageErrorf("%s %q: want NAME=VALUE, as in %s opcache=off", flag, kv, flag)
	}
	k, err := FixedIn(known, name, []string{val})
	if err != nil {
		return err
	}
	if _, isKnob := ByName(name); !isKnob {
		// An ini setting: where php-fpm honours it (a pool value, or -d for the master's settings).
		c.SetSetting(strings.TrimPrefix(name, "ini:"), val)
		return nil
	}
	if err := k.Set(c, val); err != nil {
		return exitcode.UsageErrorf("%s %s: %v", flag, kv, err)
	}
	return nil
}

// Choice is what the user said of the knobs to decide: --knob NAME=V1,V2 (values to race from V1, or one value
// to pin), --skip and --only.
type Choice struct{ Knobs, Skip, Only []string }

// Apply makes known the knobs to decide: a --knob with values replaces its knob or joins them, base starting at
// its first value unless pinned; one value pins its knob into base and pins; then --skip and --only narrow them.
// asked gets the knobs named to race.
func (ch Choice) Apply(known []Knob, base *Config, pins map[string]string, asked map[string]bool) ([]Knob, error) {
	knobs := known
	for _, kv := range ch.Knobs {
		name, vals, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, exitcode.UsageErrorf("--knob %q: want NAME=V1,V2,...", kv)
		}
		values := strings.Split(vals, ",")
		k, err := FixedIn(knobs, name, values)
		if err != nil {
			return nil, err
		}
		// One value pins the knob (the pool size too: then it is not sized).
		if len(values) > 1 {
			asked[k.Name] = true
		}
		if len(values) == 1 {
			if err := k.Set(base, values[0]); err != nil {
				return nil, exitcode.UsageErrorf("--knob %s: %v", kv, err)
			}
			pins[k.Name] = values[0]
			continue
		}
		if name == MaxChildrenName {
			return nil, exitcode.UsageErrorf("--knob max_children: the pool size is measured and its neighbours compared; give one value to pin it")
		}
		// The first value is where the sweep starts (unless a pin says otherwise): "--knob NAME=V1,V2" tries V2 against V1.
		if _, pinned := pins[k.Name]; !pinned {
			if err := k.Set(base, k.Candidates(*base)[0]); err != nil {
				return nil, exitcode.UsageErrorf("--knob %s: %v", kv, err)
			}
		}
		replaced := false
		for i := range knobs {
			if knobs[i].Name == k.Name {
				knobs[i], replaced = k, true
			}
		}
		if !replaced {
			knobs = append(knobs, k)
		}
	}
	for _, name := range ch.Only {
		if name == "none" {
			name = MaxChildren().Name // --only none: the pool size alone
		}
		asked[name] = true
	}
	return ch.narrow(knobs)
}

// narrow applies --skip and --only to knobs (a knob given with --knob stays under --only).
func (ch Choice) narrow(knobs []Knob) ([]Knob, error) {
	for _, name := range ch.Skip {
		found := false
		for i := range knobs {
			if knobs[i].Name == name {
				knobs = append(knobs[:i], knobs[i+1:]...)
				found = true
				break
			}
		}
		if !found {
			return nil, exitcode.UsageErrorf("--skip %s: no such knob among %s", name, Names(knobs))
		}
	}
	if len(ch.Only) > 0 {
		keep := map[string]bool{}
		for _, kv := range ch.Knobs {
			name, _, _ := strings.Cut(kv, "=")
			keep[strings.TrimPrefix(name, "ini:")] = true
		}
		for _, name := range ch.Only {
			if name == "none" {
				continue
			}
			if _, ok := ByName(name); !ok {
				return nil, exitcode.UsageErrorf("--only %s: no such knob among %s", name, Names(knobs))
			}
			keep[name] = true
		}
		var kept []Knob
		for _, k := range knobs {
			if keep[k.Name] {
				kept = append(kept, k)
			}
		}
		knobs = kept
	}
	return knobs, nil
}

// Names lists the knobs' names, for a message.
func Names(ks []Knob) string {
	var names []string
	for _, k := range ks {
		names = append(names, k.Name)
	}
	return strings.Join(names, ", ")
}

// WithServer puts the server knob among ks, first of those decided on goodput (before pm): which runtime serves
// the app frames every knob after it. It is skipped, with what to install, when Apache or mod_php for fpmBin's
// PHP is missing.
func WithServer(ks []Knob, fpmBin string) []Knob {
	k := Server(apacheMissing(fpmBin))
	for i, x := range ks {
		if x.Name == PM().Name {
			return append(ks[:i:i], append([]Knob{k}, ks[i:]...)...)
		}
	}
	return append(ks, k)
}

// apacheMissing says why Apache's runtimes cannot run here ("" = they can): apache2 or mod_php for the PHP of
// php-fpm fpmBin is not installed, or that PHP is not Debian's (mod_php runs Debian's).
func apacheMissing(fpmBin string) string {
	if _, err := stack.FindApache(""); err != nil {
		return "apache2 is not installed (apt-get install apache2 libapache2-mod-php8.2 to race Apache's runtimes)"
	}
	bin, err := stack.FindPHPFPM(fpmBin)
	if err != nil {
		return err.Error()
	}
	if _, err := stack.ModPHP(bin); err != nil {
		return err.Error()
	}
	return ""
}

// NeedsApache checks, before anything starts, that a run from base whose --knob values (given) name an Apache
// runtime can start it on sc's binaries: exit 2 with what to install when it cannot.
func NeedsApache(base Config, sc stack.Config, given []string) error {
	servers := []string{base.ServerName()}
	for _, kv := range given {
		if name, vals, ok := strings.Cut(kv, "="); ok && name == ServerName {
			servers = append(servers, strings.Split(vals, ",")...)
		}
	}
	for _, s := range servers {
		if s != ApacheFPM && s != ApacheModPHP {
			continue
		}
		if _, err := stack.FindApache(sc.Apache); err != nil {
			return err
		}
		if s == ApacheModPHP {
			bin, err := stack.FindPHPFPM(sc.PHPFPM)
			if err != nil {
				return err
			}
			if _, err := stack.ModPHP(bin); err != nil {
				return err
			}
		}
	}
	return nil
}

// WithBinaries adds bins to the knob php's values, after those it had (the installed php-fpm, fpmBin's, when it
// had none), and starts base from the first.
func WithBinaries(knobs []Knob, base *Config, fpmBin string, bins []string) ([]Knob, error) {
	var all []string
	at := slices.IndexFunc(knobs, func(k Knob) bool { return k.Name == "php" })
	if at >= 0 {
		all = knobs[at].Candidates(*base)
	}
	if len(all) == 0 {
		installed, err := stack.FindPHPFPM(fpmBin)
		if err != nil {
			return nil, err
		}
		all = []string{installed}
	}
	for _, b := range bins {
		if !slices.Contains(all, b) {
			all = append(all, b)
		}
	}
	k := Binary(all)
	if at >= 0 {
		knobs[at] = k
	} else {
		knobs = append([]Knob{k}, knobs...)
	}
	base.PHPFPM = all[0]
	return knobs, nil
}
