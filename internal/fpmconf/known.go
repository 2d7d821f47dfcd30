package fpmconf

import (
	"fmt"
	"strconv"
	"strings"
)

// kind is how php-fpm reads a directive's value; it refuses a value of the wrong kind when it loads the file.
type kind int

const (
	kindString kind = iota
	kindInt         // digits, a leading - allowed (listen.backlog = -1)
	kindTime        // seconds, or a number with s, m, h or d
	kindBool        // yes/no, on/off, true/false, 1/0
	kindRlimit      // a number or "unlimited"
	kindPM          // static, dynamic or ondemand
	kindFlag        // php_flag[X], php_admin_flag[X]: a yes/no php-fpm keeps as 1 or 0
)

// globalKeys are [global]'s directives: php-fpm 8.2's, and proctitle_prefix (8.3) so that a newer
// configuration is read.
var globalKeys = map[string]kind{
	"pid": kindString, "error_log": kindString, "syslog.ident": kindString, "syslog.facility": kindString,
	"log_buffering": kindBool, "log_level": kindString, "log_limit": kindInt,
	"emergency_restart_interval": kindTime, "emergency_restart_threshold": kindInt,
	"process_control_timeout": kindTime, "process.max": kindInt, "process.priority": kindInt,
	"daemonize": kindBool, "rlimit_files": kindInt, "rlimit_core": kindRlimit, "events.mechanism": kindString,
	"systemd_interval": kindTime, "proctitle_prefix": kindString,
}

// poolKeys are a pool's directives: php-fpm 8.2's, with those only some builds or later versions know
// (apparmor_hat, listen.setfib, access.suppress_path).
var poolKeys = map[string]kind{
	"prefix": kindString, "user": kindString, "group": kindString,
	"listen": kindString, "listen.backlog": kindInt, "listen.acl_users": kindString, "listen.acl_groups": kindString,
	"listen.owner": kindString, "listen.group": kindString, "listen.mode": kindString,
	"listen.allowed_clients": kindString, "listen.setfib": kindInt,
	"process.priority": kindInt, "process.dumpable": kindBool,
	"pm": kindPM, "pm.max_children": kindInt, "pm.start_servers": kindInt, "pm.min_spare_servers": kindInt,
	"pm.max_spare_servers": kindInt, "pm.max_spawn_rate": kindInt, "pm.process_idle_timeout": kindTime,
	"pm.max_requests": kindInt, "pm.status_path": kindString, "pm.status_listen": kindString,
	"ping.path": kindString, "ping.response": kindString,
	"access.log": kindString, "access.format": kindString, "access.suppress_path": kindString,
	"slowlog": kindString, "request_slowlog_timeout": kindTime, "request_slowlog_trace_depth": kindInt,
	"request_terminate_timeout": kindTime, "request_terminate_timeout_track_finished": kindBool,
	"rlimit_files": kindInt, "rlimit_core": kindRlimit, "chroot": kindString, "chdir": kindString,
	"catch_workers_output": kindBool, "decorate_workers_output": kindBool, "clear_env": kindBool,
	"security.limit_extensions": kindString, "apparmor_hat": kindString,
}

// arrayKeys are the directives written NAME[KEY] = VALUE; php-fpm matches these names with case.
var arrayKeys = map[string]bool{"php_value": true, "php_admin_value": true, "php_flag": true, "php_admin_flag": true, "env": true}

// canonicalKey is a key as php-fpm prints it: a plain directive lower-case (php-fpm matches it without case),
// an array one as written.
func canonicalKey(k string) string {
	if strings.Contains(k, "[") {
		return k
	}
	return strings.ToLower(k)
}

// checkKey says whether php-fpm knows key in a section ([global] or a pool) and how it reads it.
func checkKey(key string, global bool) (kind, error) {
	if name, _, ok := strings.Cut(key, "["); ok {
		if global || !arrayKeys[name] || !strings.HasSuffix(key, "]") {
			return 0, fmt.Errorf("unknown directive %q", name)
		}
		if strings.HasSuffix(name, "_flag") {
			return kindFlag, nil
		}
		return kindString, nil
	}
	keys := poolKeys
	if global {
		keys = globalKeys
	}
	k, ok := keys[key]
	if !ok {
		return 0, fmt.Errorf("unknown entry %q", key)
	}
	return k, nil
}

// checkValue refuses what php-fpm refuses when it loads the file, and gives the value as php-fpm keeps it.
func checkValue(k kind, v string) (string, error) {
	switch k {
	case kindInt:
		if !isNumber(v) {
			return "", fmt.Errorf("%q is not a whole number", v)
		}
	case kindRlimit:
		if v != "unlimited" && !isNumber(v) {
			return "", fmt.Errorf("%q is not a whole number nor unlimited", v)
		}
	case kindTime:
		if _, err := ParseSeconds(v); err != nil {
			return "", err
		}
	case kindBool, kindFlag:
		b, ok := boolValues[strings.ToLower(v)]
		if !ok {
			return "", fmt.Errorf("%q is not yes or no", v)
		}
		if k == kindFlag {
			return map[bool]string{true: "1", false: "0"}[b], nil
		}
	case kindPM:
		v = strings.ToLower(v)
		if v != "static" && v != "dynamic" && v != "ondemand" {
			return "", fmt.Errorf("%q is not a process manager (static, dynamic or ondemand)", v)
		}
	}
	return v, nil
}

// isNumber is php-fpm's test for a number: digits, a - first allowed, and nothing (which it reads as 0).
func isNumber(v string) bool {
	for i, c := range v {
		if (c < '0' || c > '9') && !(i == 0 && c == '-') {
			return false
		}
	}
	return true
}

var boolValues = map[string]bool{"1": true, "yes": true, "on": true, "true": true, "": false, "0": false, "no": false, "off": false, "false": false}

func truthy(v string) bool { return boolValues[strings.ToLower(v)] }

// ParseSeconds reads a php-fpm time value (request_terminate_timeout and the like): plain seconds or a number
// with s, m, h or d.
func ParseSeconds(v string) (int, error) {
	orig, mult := v, 1
	if n := len(v); n > 0 {
		switch v[n-1] {
		case 's':
			v = v[:n-1]
		case 'm':
			v, mult = v[:n-1], 60
		case 'h':
			v, mult = v[:n-1], 3600
		case 'd':
			v, mult = v[:n-1], 86400
		}
	}
	n, err := strconv.Atoi(v)
	if err != nil && v != "" {
		return 0, fmt.Errorf("%q is not a time (seconds, or a number with s, m, h or d)", orig)
	}
	return n * mult, nil
}
