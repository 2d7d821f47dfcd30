package knob

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/stack"
)

// FromApacheFile reads an Apache setup (the user's current one) over c, the way FromPoolFile reads a pool: the
// runtime (mod_php under prefork, or php-fpm behind mod_proxy_fcgi), the MPM's limits and mod_php's
// php_value/php_admin_value/php_flag/php_admin_flag lines. Include and IncludeOptional are followed (globs,
// relative to ServerRoot or the file's directory), as Apache reads them; an <IfModule mpm_NAME_module> block
// counts for the MPM in use only. Other directives are left to the user's files.
func (c *Config) FromApacheFile(path string) error {
	a := apacheReader{root: filepath.Dir(path), blocks: map[string]*stack.MPM{}, top: &stack.MPM{}}
	if err := a.read(path, 0, true); err != nil {
		return err
	}
	mpm, err := a.mpm(path)
	if err != nil {
		return err
	}
	m := *a.top
	if b := a.blocks[mpm]; b != nil {
		m = mergeMPM(m, *b)
	}
	m.Name = mpm
	if err := m.Validate(); err != nil {
		return exitcode.UsageErrorf("%s: %v", path, err)
	}
	c.Apache = &m
	if mpm == stack.MPMPrefork && !a.fcgi {
		c.Server = ApacheModPHP
		d := m.WithDefaults(ApacheModPHP)
		c.MaxChildren, c.PM = d.MaxRequestWorkers, "dynamic"
		if d.StartServers == d.MaxRequestWorkers && d.MinSpareServers == d.MaxRequestWorkers {
			c.PM = "static" // every process kept: what pm = static is to php-fpm
		}
		c.StartServers, c.MinSpare, c.MaxSpare = 0, 0, 0
	} else {
		c.Server = ApacheFPM // the pool itself: --from-pool
	}
	for _, kv := range a.php {
		c.SetSetting(kv[0], kv[1])
	}
	return nil
}

// apacheReader gathers what FromApacheFile needs from Apache's config files.
type apacheReader struct {
	root    string                // ServerRoot: where relative includes are found
	loaded  map[string]bool       // modules loaded, by name (mpm_prefork_module, php_module...)
	blocks  map[string]*stack.MPM // directives inside <IfModule mpm_NAME_module>, by NAME
	top     *stack.MPM            // MPM directives outside such blocks
	php     [][2]string           // php_value and friends, in order
	fcgi    bool                  // a handler passes PHP to FastCGI
	sawPHP  bool                  // a php_* directive, or mod_php's handler
	visited int
}

// maxApacheFiles bounds the files an Include may pull in (a glob of a big directory, an include loop).
const maxApacheFiles = 500

func (a *apacheReader) read(path string, depth int, must bool) error {
	if a.visited++; a.visited > maxApacheFiles || depth > 20 {
		return exitcode.UsageErrorf("%s: more than %d files included (an include loop?)", path, maxApacheFiles)
	}
	f, err := os.Open(path)
	if err != nil {
		if !must && os.IsNotExist(err) {
			return nil
		}
		return exitcode.UsageErrorf("--from-apache: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var block []ifModule // the <IfModule> sections open around a line
	line, n := "", 0
	for sc.Scan() {
		n++
		text := strings.TrimSpace(sc.Text())
		if strings.HasSuffix(text, "\\") { // continued on the next line
			line += strings.TrimSuffix(text, "\\") + " "
			continue
		}
		line += text
		text, line = line, ""
		if text == "" || text[0] == '#' {
			continue
		}
		if err := a.directive(path, n, text, &block, depth); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return exitcode.UsageErrorf("--from-apache: read %s: %v", path, err)
	}
	return nil
}

// ifModule is an open <IfModule> section: an MPM's block (its directives are kept for that MPM), or a module's,
// whose directives count only when the module is loaded (Debian's php8.2.conf turns PHP off in user dirs
// within <IfModule mod_userdir.c>).
type ifModule struct {
	mpm    string
	active bool
}

// builtIn are the modules Debian's apache2 has compiled in: always loaded.
var builtIn = map[string]bool{"core_module": true, "so_module": true, "http_module": true, "log_config_module": true,
	"logio_module": true, "version_module": true, "unixd_module": true, "watchdog_module": true}

// section opens an <IfModule ARG> section.
func (a *apacheReader) section(arg string) ifModule {
	arg = strings.Trim(strings.TrimSpace(arg), `"`)
	not := strings.HasPrefix(arg, "!")
	mod := strings.TrimPrefix(arg, "!")
	if file, ok := strings.CutPrefix(mod, "mod_"); ok && strings.HasSuffix(file, ".c") {
		mod = strings.TrimSuffix(file, ".c") + "_module" // mod_userdir.c is userdir_module
	}
	if mpm, ok := strings.CutPrefix(mod, "mpm_"); ok && !not {
		return ifModule{mpm: strings.TrimSuffix(mpm, "_module"), active: true}
	}
	if a.loaded == nil {
		return ifModule{active: true} // a file that loads nothing: its sections are taken as meant
	}
	return ifModule{active: (a.loaded[mod] || builtIn[mod]) != not}
}

// directive takes one line of path (number n).
func (a *apacheReader) directive(path string, n int, text string, block *[]ifModule, depth int) error {
	if strings.HasPrefix(text, "</") {
		if strings.HasPrefix(strings.ToLower(text), "</ifmodule") && len(*block) > 0 {
			*block = (*block)[:len(*block)-1]
		}
		return nil
	}
	if strings.HasPrefix(text, "<") {
		name, arg, _ := strings.Cut(strings.Trim(text, "<>"), " ")
		if strings.EqualFold(name, "IfModule") {
			*block = append(*block, a.section(arg))
		}
		return nil
	}
	words := apacheWords(text)
	if len(words) == 0 {
		return nil
	}
	for _, b := range *block {
		if !b.active {
			return nil
		}
	}
	name, args := strings.ToLower(words[0]), words[1:]
	switch name {
	case "serverroot":
		if len(args) > 0 {
			a.root = args[0]
		}
	case "include", "includeoptional":
		if len(args) == 0 {
			return nil
		}
		pattern := args[0]
		if !filepath.IsAbs(pattern) {
			pattern = filepath.Join(a.root, pattern)
		}
		files, _ := filepath.Glob(pattern)
		if len(files) == 0 && name == "include" && !strings.ContainsAny(pattern, "*?[") {
			return exitcode.UsageErrorf("%s:%d: Include %s: no such file", path, n, args[0])
		}
		for _, f := range files {
			if err := a.read(f, depth+1, name == "include"); err != nil {
				return err
			}
		}
	case "loadmodule":
		if len(args) > 0 {
			if a.loaded == nil {
				a.loaded = map[string]bool{}
			}
			a.loaded[args[0]] = true
			if strings.HasPrefix(args[0], "php") {
				a.sawPHP = true
			}
		}
	case "php_value", "php_admin_value", "php_flag", "php_admin_flag":
		if len(args) < 2 {
			return exitcode.UsageErrorf("%s:%d: %s wants a name and a value, got %q", path, n, words[0], text)
		}
		a.php = append(a.php, [2]string{args[0], args[1]})
		a.sawPHP = true
	case "sethandler", "addhandler":
		h := strings.ToLower(strings.Join(args, " "))
		if strings.Contains(h, "fcgi://") {
			a.fcgi = true
		} else if strings.Contains(h, "application/x-httpd-php") {
			a.sawPHP = true
		}
	default:
		return a.mpmDirective(path, n, name, args, *block)
	}
	return nil
}

// mpmDirective sets an MPM limit, in the block of the MPM its <IfModule> names (or outside any).
func (a *apacheReader) mpmDirective(path string, n int, name string, args []string, block []ifModule) error {
	dst := a.top
	for _, b := range block {
		if b.mpm != "" {
			if a.blocks[b.mpm] == nil {
				a.blocks[b.mpm] = &stack.MPM{}
			}
			dst = a.blocks[b.mpm]
		}
	}
	fields := map[string]*int{"startservers": &dst.StartServers, "minspareservers": &dst.MinSpareServers,
		"maxspareservers": &dst.MaxSpareServers, "minsparethreads": &dst.MinSpareThreads, "maxsparethreads": &dst.MaxSpareThreads,
		"threadsperchild": &dst.ThreadsPerChild, "maxrequestworkers": &dst.MaxRequestWorkers, "maxclients": &dst.MaxRequestWorkers,
		"maxconnectionsperchild": &dst.MaxConnectionsPerChild, "maxrequestsperchild": &dst.MaxConnectionsPerChild}
	p, ok := fields[name]
	if !ok {
		return nil
	}
	v, err := -1, error(nil)
	if len(args) == 1 {
		v, err = strconv.Atoi(args[0])
	}
	if err != nil || v < 0 {
		return exitcode.UsageErrorf("%s:%d: %s wants a whole number, got %q", path, n, name, strings.Join(args, " "))
	}
	*p = v
	return nil
}

// mpm is the MPM the files run: the one loaded, else the one their PHP implies (mod_php needs prefork, a FastCGI
// handler runs with event), else the only one they configure.
func (a *apacheReader) mpm(path string) (string, error) {
	for _, m := range []string{stack.MPMPrefork, stack.MPMEvent, "worker"} {
		if a.loaded["mpm_"+m+"_module"] {
			if m == "worker" {
				return "", exitcode.UsageErrorf("%s: the worker MPM: phptune runs prefork (mod_php) or event (php-fpm)", path)
			}
			return m, nil
		}
	}
	switch {
	case a.fcgi:
		return stack.MPMEvent, nil
	case a.sawPHP:
		return stack.MPMPrefork, nil
	case len(a.blocks) == 1:
		for m := range a.blocks {
			if m == stack.MPMPrefork || m == stack.MPMEvent {
				return m, nil
			}
		}
	}
	return "", exitcode.UsageErrorf("%s: cannot tell the MPM or how PHP runs: give the file that loads them "+
		"(/etc/apache2/apache2.conf reads the rest), or one with php_value lines or a prefork block", path)
}

// mergeMPM is top with b's values where b sets them.
func mergeMPM(top, b stack.MPM) stack.MPM {
	set := func(dst *int, v int) {
		if v != 0 {
			*dst = v
		}
	}
	set(&top.StartServers, b.StartServers)
	set(&top.MinSpareServers, b.MinSpareServers)
	set(&top.MaxSpareServers, b.MaxSpareServers)
	set(&top.MinSpareThreads, b.MinSpareThreads)
	set(&top.MaxSpareThreads, b.MaxSpareThreads)
	set(&top.ThreadsPerChild, b.ThreadsPerChild)
	set(&top.MaxRequestWorkers, b.MaxRequestWorkers)
	set(&top.MaxConnectionsPerChild, b.MaxConnectionsPerChild)
	return top
}

// apacheWords splits a directive into its words, as Apache does: double or single quotes group, a backslash
// escapes the quote.
func apacheWords(s string) []string {
	var out []string
	var cur strings.Builder
	quote, in := byte(0), false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote != 0 && ch == '\\' && i+1 < len(s) && (s[i+1] == quote || s[i+1] == '\\'):
			i++
			cur.WriteByte(s[i])
		case quote != 0 && ch == quote:
			quote = 0
		case quote == 0 && (ch == '"' || ch == '\'') && !in:
			quote, in = ch, true
		case quote == 0 && (ch == ' ' || ch == '\t'):
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(ch)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}
