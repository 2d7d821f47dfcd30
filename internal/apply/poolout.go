package apply

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// outs are the pool's files to put on the server: its home file (always, so that the plan names the pool's
// file) and every other file changed, in the order php-fpm reads them. written says the
// start was not read from the server: the pool's file is new.
func (e *poolEdit) outs(header []string, written bool, what string) []Out {
	home := e.home()
	var out []Out
	names := map[string]bool{}
	for _, f := range e.conf.Files {
		if !e.edited[f.Path] && f.Path != home || names[f.Path] {
			continue
		}
		names[f.Path] = true
		c, err := e.file(f.Path)
		if err != nil {
			e.notes = append(e.notes, err.Error())
			continue
		}
		e.addLines(f.Path, c)
		c.top(comment(";", header))
		o := Out{Name: PoolName, Dest: f.Path, From: f.Path, What: what, Text: c.String(), before: e.before[f.Path]}
		if len(out) > 0 {
			o.Name = uniqueName(out, "php-fpm-"+filepath.Base(f.Path))
			o.What = fmt.Sprintf("the pool [%s]'s settings php-fpm takes from this file", e.pool.Name)
		}
		if written {
			o.From, o.before = "", ""
		}
		out = append(out, o)
	}
	return out
}

// uniqueName is name, or name with a number where another file has it.
func uniqueName(outs []Out, name string) string {
	taken := func(n string) bool {
		for _, o := range outs {
			if o.Name == n {
				return true
			}
		}
		return false
	}
	for i := 2; taken(name); i++ {
		name = strings.TrimSuffix(name, ".conf") + "-" + strconv.Itoa(i) + ".conf"
	}
	return name
}

// after is the pool's directives as php-fpm runs them once the files are in place, in the order first set.
func (e *poolEdit) after() (keys []string, values map[string]string) {
	values = map[string]string{}
	for _, k := range e.pool.Keys {
		keys = append(keys, k)
		values[k] = e.pool.Directives[k].Value
	}
	for _, ch := range e.changes {
		if _, ok := values[ch.Key]; !ok {
			keys = append(keys, ch.Key)
		}
		values[ch.Key] = ch.To
	}
	return keys, values
}

// render is the pool after the changes as one section, for php-fpm -t: each value quoted as resolved.
func (e *poolEdit) render() string {
	keys, values := e.after()
	var b strings.Builder
	fmt.Fprintf(&b, "[%s]\n", e.pool.Name)
	for _, k := range keys {
		if v, ok := values[k]; ok && (v != "" || e.pool.Directives[k].Value == "") {
			fmt.Fprintf(&b, "%s = \"%s\"\n", k, v)
		}
	}
	return b.String()
}
