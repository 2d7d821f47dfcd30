package check

import (
	"fmt"
	"os"
	"path"
	"strings"
)

// reloadHint says how to make a master read its configuration again: through the systemd unit that runs it
// (named in its cgroup), else by its signal.
func reloadHint(master int) string {
	if master <= 0 {
		return "reload php-fpm (systemctl reload, or kill -USR2 with the master's pid)"
	}
	if unit := systemdUnit(master); unit != "" {
		return fmt.Sprintf("reload php-fpm (systemctl reload %s, or kill -USR2 %d)", unit, master)
	}
	return fmt.Sprintf("reload php-fpm (kill -USR2 %d)", master)
}

// systemdUnit is the service whose cgroup holds pid ("php8.2-fpm.service"), or "": cgroup v2's line "0::PATH",
// or v1's named hierarchy "N:name=systemd:PATH", ends in the unit.
func systemdUnit(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return ""
	}
	return unitIn(string(b))
}

// unitIn is the service unit a /proc/PID/cgroup text names, or "".
func unitIn(cgroup string) string {
	for _, line := range strings.Split(cgroup, "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 || (f[1] != "" && f[1] != "name=systemd") {
			continue
		}
		if unit := path.Base(f[2]); strings.HasSuffix(unit, ".service") {
			return unit
		}
	}
	return ""
}
