package fpmconf

import "strings"

// value is the text after = as php's ini scanner gives it to php-fpm: "double quotes" with ${VAR} expanded,
// 'single quotes' as written, else up to a ; comment, trimmed, ${VAR} expanded, and the ini keywords as PHP
// reads them (yes/on/true are "1"; no/off/false/none/null are "").
func value(raw string, env func(string) string) string {
	v := strings.TrimSpace(raw)
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') {
		if end := strings.IndexByte(v[1:], v[0]); end >= 0 {
			if v[0] == '\'' {
				return v[1 : end+1]
			}
			return expandEnv(v[1:end+1], env)
		}
	}
	if i := strings.IndexByte(v, ';'); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	switch strings.ToLower(v) {
	case "yes", "on", "true":
		return "1"
	case "no", "off", "false", "none", "null":
		return ""
	}
	return expandEnv(v, env)
}

// expandEnv replaces ${VAR} with the variable's value ("" when unset), as the ini scanner does.
func expandEnv(v string, env func(string) string) string {
	for {
		i := strings.Index(v, "${")
		if i < 0 {
			return v
		}
		j := strings.IndexByte(v[i:], '}')
		if j < 0 {
			return v
		}
		v = v[:i] + env(v[i+2:i+j]) + v[i+j+1:]
	}
}

// expandPool replaces $pool with the pool's name, as php-fpm does in a pool's values.
func expandPool(v, pool string) string {
	return strings.ReplaceAll(v, "$pool", pool)
}
