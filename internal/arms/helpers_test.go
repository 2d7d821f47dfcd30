package arms

import "github.com/phptune/phptune/internal/experiment"

// stopAll stops the arms, the last one's stop ending what its experiment started ahead.
func stopAll(as []experiment.Arm) {
	for _, a := range as {
		a.Stop()
	}
}
