package arms

import (
	"sync"

	"github.com/phptune/phptune/internal/experiment"
)

// stopAll stops the arms side by side, as tune's races do.
func stopAll(as []experiment.Arm) {
	var wg sync.WaitGroup
	for _, a := range as {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.Stop()
		}()
	}
	wg.Wait()
}
