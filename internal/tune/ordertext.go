package tune

import (
	"fmt"
	"strings"

	"github.com/phptune/phptune/internal/knob"
)

// OrderText is the knobs in the order tune decides them (Order), in words for tune's help: the CPU knobs, the
// pool size, the knobs decided on requests/s, and max_requests from the soak.
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
	return fmt.Sprintf("On CPU per request: %s; then the pool size, max_children; then on requests/s served: %s; max_requests from "+
		"workers' memory growth per request (--soak).", strings.Join(cpu, ", "), strings.Join(rest, ", "))
}
