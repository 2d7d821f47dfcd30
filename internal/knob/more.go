package knob

import (
	"fmt"
	"strconv"
)

// MaxRequests is pm.max_requests: workers restart after that many requests (0: never), which bounds leaks at
// the cost of a fork and a cold worker.
func MaxRequests() Knob {
	return Knob{
		Name:       "max_requests",
		Doc:        "pm.max_requests: requests a worker serves before it is replaced (0: never)",
		Candidates: func(Config) []string { return []string{"0", "500"} },
		Get:        func(c Config) string { return strconv.Itoa(c.MaxRequests) },
		Set: func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("max_requests %q: want a whole number, 0 for never", v)
			}
			c.MaxRequests = n
			return nil
		},
	}
}

// Backlog is listen.backlog of the pool's socket: connections waiting for a worker beyond it are refused.
func Backlog() Knob {
	return Knob{
		Name:       "backlog",
		Doc:        "listen.backlog: connections that may wait for a free worker (0: php-fpm's default, 511)",
		Candidates: func(Config) []string { return []string{"0", "4096"} },
		Get:        func(c Config) string { return strconv.Itoa(c.Backlog) },
		Set: func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("backlog %q: want a whole number, 0 for php-fpm's default", v)
			}
			c.Backlog = n
			return nil
		},
	}
}

// JIT is opcache's JIT: off, or tracing/function with a buffer (the buffer is set once for the master, so it
// goes to php-fpm -d; the mode is per pool).
func JIT() Knob {
	return Knob{
		Name:       "jit",
		Doc:        "opcache.jit off, tracing or function, with a 64 MiB buffer when on",
		Candidates: func(Config) []string { return []string{"off", "tracing", "function"} },
		Get: func(c Config) string {
			switch c.INI["opcache.jit"] {
			case "tracing", "function":
				return c.INI["opcache.jit"]
			}
			return "off"
		},
		Set: func(c *Config, v string) error {
			switch v {
			case "off":
				c.SetINI("opcache.jit", "disable")
				delete(c.Defines, "opcache.jit_buffer_size")
			case "tracing", "function":
				c.SetINI("opcache.jit", v)
				c.SetSetting("opcache.jit_buffer_size", "64M")
			default:
				return fmt.Errorf("jit %q: want off, tracing or function", v)
			}
			return nil
		},
	}
}
