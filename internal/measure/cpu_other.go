//go:build !linux

package measure

import (
	"errors"
	"time"
)

// SelfCPU is not available off Linux.
func SelfCPU() (time.Duration, error) { return 0, errors.New("measure: SelfCPU needs Linux") }

func threadCPU() time.Duration { return 0 }
