package apply

import (
	"regexp"
	"slices"
	"strings"
)

// conf is a php-fpm configuration file or a php.ini as lines, edited in place, so that its diff against the start shows
// only what changed: a setting is changed on its own line, added after its commented-out example (Debian's
// files carry one for most), else after the section's last setting; one removed is commented out.
type conf struct {
	lines []string
	// lo and hi bound the lines edited: a pool's section while a directive is added to it, else the whole file.
	lo, hi int
}

var sectionLine = regexp.MustCompile(`^\s*\[([^\]]+)\]\s*$`)

// iniConf reads an ini file, all of which is edited.
func iniConf(text string) *conf {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if text == "" {
		lines = nil
	}
	return &conf{lines: lines, hi: len(lines)}
}

func (c *conf) String() string {
	if len(c.lines) == 0 {
		return ""
	}
	return strings.Join(c.lines, "\n") + "\n"
}

// keyOf reads a line's setting: its key and value, whether it is commented out, and whether it is a setting
// at all.
func keyOf(line string) (key, value string, commented, ok bool) {
	s := strings.TrimSpace(line)
	if strings.HasPrefix(s, ";") || strings.HasPrefix(s, "#") {
		commented = true
		s = strings.TrimSpace(strings.TrimLeft(s, ";#"))
	}
	k, v, found := strings.Cut(s, "=")
	if !found || strings.ContainsAny(strings.TrimSpace(k), " \t") || strings.TrimSpace(k) == "" {
		return "", "", false, false
	}
	return strings.TrimSpace(k), strings.TrimSpace(v), commented, true
}

// find is the line that sets one of keys in the edited part, and the key as the line spells it (-1: none).
func (c *conf) find(keys []string, commented bool) (int, string) {
	for i := c.lo; i < c.hi; i++ {
		k, _, com, ok := keyOf(c.lines[i])
		if ok && com == commented && slices.Contains(keys, k) {
			return i, k
		}
	}
	return -1, ""
}

// has says whether one of keys is set in the edited part.
func (c *conf) has(keys []string) bool {
	i, _ := c.find(keys, false)
	return i >= 0
}

// set sets key (or the first of alts the file already uses, spelt as the file spells it) to value where it
// is, else after its commented-out example, else after the part's last setting. It says whether the file
// changed.
func (c *conf) set(key, value string, alts ...string) bool {
	keys := append([]string{key}, alts...)
	if i, k := c.find(keys, false); i >= 0 {
		indent := c.lines[i][:len(c.lines[i])-len(strings.TrimLeft(c.lines[i], " \t"))]
		line := indent + k + " = " + value
		if _, v, _, _ := keyOf(c.lines[i]); v == value {
			return false
		}
		c.lines[i] = line
		return true
	}
	at := c.hi
	if i, _ := c.find(keys, true); i >= 0 {
		at = i + 1
	} else {
		for at > c.lo && strings.TrimSpace(c.lines[at-1]) == "" {
			at--
		}
	}
	c.insert(at, key+" = "+value)
	return true
}

// unset comments out every line that sets one of keys.
func (c *conf) unset(keys ...string) {
	for i := c.lo; i < c.hi; i++ {
		if k, _, com, ok := keyOf(c.lines[i]); ok && !com && slices.Contains(keys, k) {
			c.lines[i] = ";" + c.lines[i]
		}
	}
}

// insert puts line at index at, within the edited part.
func (c *conf) insert(at int, line string) {
	c.lines = append(c.lines[:at], append([]string{line}, c.lines[at:]...)...)
	c.hi++
}

// top puts lines at the top of the file, above everything (a header).
func (c *conf) top(lines []string) {
	c.lines = append(append([]string(nil), lines...), c.lines...)
	c.lo += len(lines)
	c.hi += len(lines)
}

// value is what key (or an alternative) is set to in the edited part ("" when not set).
func (c *conf) value(keys ...string) string {
	if i, _ := c.find(keys, false); i >= 0 {
		_, v, _, _ := keyOf(c.lines[i])
		return strings.Trim(v, `"`)
	}
	return ""
}

// phpKeys are the ways a pool file sets PHP's setting name.
func phpKeys(name string) []string {
	return []string{"php_admin_value[" + name + "]", "php_value[" + name + "]", "php_admin_flag[" + name + "]", "php_flag[" + name + "]"}
}
