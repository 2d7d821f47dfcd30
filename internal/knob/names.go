package knob

import (
	"slices"
	"strings"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/suggest"
)

// poolKnobs are the php-fpm pool directives a knob sets: given as an ini name, they would set nothing.
var poolKnobs = map[string]string{
	"pm": "pm", "pm.max_children": "max_children", "pm.max_requests": "max_requests", "listen": "listen",
	"listen.backlog": "backlog",
}

// poolOnly are the other pool directives: no knob races them, and php-fpm reads them from the pool file alone.
var poolOnly = []string{
	"pm.start_servers", "pm.min_spare_servers", "pm.max_spare_servers", "pm.max_spawn_rate", "pm.process_idle_timeout",
	"pm.status_path", "pm.status_listen", "ping.path", "ping.response", "request_terminate_timeout",
	"request_terminate_timeout_track_finished", "request_slowlog_timeout", "request_slowlog_trace_depth", "slowlog",
	"rlimit_files", "rlimit_core", "catch_workers_output", "decorate_workers_output", "clear_env",
	"security.limit_extensions", "listen.owner", "listen.group", "listen.mode", "listen.acl_users", "listen.acl_groups",
	"listen.allowed_clients", "listen.setfib", "user", "group", "chdir", "chroot", "access.log", "access.format",
	"process.priority", "process.dumpable",
}

// CheckName refuses a name given to flag that would set nothing: for --knob and --compare (knobs true) a knob
// of known, max_children, or an ini directive PHP knows (directives, read only when needed); for --ini, an ini
// directive. A pool directive is pointed to its knob; anything else gets the nearest names.
func CheckName(flag, name string, known []Knob, knobs bool, directives func() ([]string, error)) error {
	ini, forced := strings.CutPrefix(name, "ini:")
	var knobNames []string
	if knobs {
		for _, k := range append(slices.Clone(known), MaxChildren()) {
			knobNames = append(knobNames, k.Name)
		}
		if !forced && slices.Contains(knobNames, name) {
			return nil
		}
	}
	if k, ok := poolKnobs[ini]; ok {
		return exitcode.UsageErrorf("%s %s: a php-fpm pool directive, set by the knob %s: give --knob %s=...", flag, ini, k, k)
	}
	if slices.Contains(poolOnly, ini) {
		return exitcode.UsageErrorf("%s %s: a php-fpm pool directive no knob races: set it in the pool file given with --from-pool", flag, ini)
	}
	if !knobs && slices.ContainsFunc(known, func(k Knob) bool { return k.Name == ini }) || ini == MaxChildren().Name {
		return exitcode.UsageErrorf("%s %s: a knob, not an ini directive: give --knob %s=...", flag, ini, ini)
	}
	names, err := directives()
	if err != nil {
		return err
	}
	if slices.Contains(names, ini) {
		return nil
	}
	what := "neither a knob nor an ini directive this PHP knows"
	if !knobs {
		what = "not an ini directive this PHP knows"
	}
	near := suggest.Nearest(ini, append(knobNames, names...))
	if len(near) == 0 {
		return exitcode.UsageErrorf("%s %s: %s (an extension's directive needs the extension loaded in php-fpm)", flag, ini, what)
	}
	return exitcode.UsageErrorf("%s %s: %s; did you mean %s?", flag, ini, what, suggest.Or(near))
}
