package tune

import (
	"fmt"
	"slices"
	"strings"

	"github.com/phptune/phptune/internal/knob"
)

// OrderText is the knobs in the order tune decides them (Order), in words for tune's help: the CPU knobs, the
// server, the pool size, the knobs decided on requests/s, and max_requests from the soak.
func OrderText() string {
	const ini = "ini directives given with --knob"
	ks := append(knob.WithServer(knob.All("preload.php", []string{"a", "b"}), ""), knob.INI(ini))
	order := Order(ks)
	var cpu, rest []string
	for i, n := range order {
		if n == knob.MaxChildren().Name {
			cpu, rest = order[:i], order[i+1:]
			break
		}
	}
	server := ""
	if i := slices.Index(cpu, knob.ServerName); i >= 0 {
		cpu, server = slices.Delete(cpu, i, i+1), "then on requests/s served, the server; "
	}
	return fmt.Sprintf("On CPU per request: %s; %sthen the pool size, max_children; then on requests/s served: %s; "+
		"max_requests from workers' memory growth per request (--soak).", strings.Join(cpu, ", "), server, strings.Join(rest, ", "))
}
