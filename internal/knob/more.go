package knob

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/bytesize"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/stack"
)

// MaxRequests is pm.max_requests: workers restart after that many requests (0: never), which bounds leaks at
// the cost of a fork and a cold worker. What it is for, memory growth over hours, no throughput trial shows:
// tune decides it from its soak (Soak), and races the candidates only when asked to.
func MaxRequests() Knob {
	return Knob{
		Name:       "max_requests",
		Soak:       true,
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
		Show: func(v string) string {
			if v == "0" {
				return "0 (never)"
			}
			return v
		},
	}
}

// Backlog is listen.backlog of the pool's socket: connections waiting for a worker beyond it are refused.
func Backlog() Knob {
	return Knob{
		Name:       "backlog",
		Doc:        "listen.backlog: connections that may wait for a free worker (0: php-fpm's default, 511)",
		Tail:       true, // more may wait rather than be refused
		Candidates: func(Config) []string { return []string{"0", "4096"} },
		Get:        func(c Config) string { return strconv.Itoa(c.Backlog) },
		Set: func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < -1 {
				return fmt.Errorf("backlog %q: want a whole number, 0 for php-fpm's default, -1 for the kernel's maximum", v)
			}
			c.Backlog = n
			return nil
		},
		Show: func(v string) string {
			if v == "0" || v == "" {
				return "default (511)"
			}
			if v == "-1" {
				return "the kernel's maximum (net.core.somaxconn)"
			}
			return v
		},
		Skip: func(f Facts, c Config) string {
			if f.Concurrency > 0 && f.Concurrency < 511 {
				return fmt.Sprintf("at most %d connections wait for a worker, within php-fpm's default backlog (511)", f.Concurrency)
			}
			return ""
		},
	}
}

// JIT is opcache's JIT: off, or tracing/function with a buffer (the buffer is set once for the master, so it
// goes to php-fpm -d; the mode is per pool). Decided on CPU time and never screened: the code it makes at run time
// is counted only once hot, which a count of a few requests in one process may not reach (WordPress's tracing JIT
// counted +0.6% instructions in tune's screen and was dropped, 18% fewer in profile's count, -2.6% CPU time a
// request in bench/jitwarm), and its instructions are not its time.
func JIT() Knob {
	return Knob{
		Name:    "jit",
		Doc:     "opcache.jit off, tracing or function, with a 64 MiB buffer when on",
		CPUTime: true,
		Skip: func(f Facts, c Config) string {
			if c.INI["opcache.enable"] == "0" {
				return "opcache is off (the JIT is part of it)"
			}
			return ""
		},
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

// ValidateTimestamps is opcache checking scripts' timestamps (every opcache.revalidate_freq seconds). Off saves
// the stat calls, but then a deploy must reload php-fpm (or call opcache_reset) to be seen.
func ValidateTimestamps() Knob {
	k := toggle("validate_timestamps", "opcache.validate_timestamps: off saves stat calls; deploys then need a php-fpm reload",
		[]string{"on", "off"},
		func(c Config) bool { return c.INI["opcache.validate_timestamps"] != "0" },
		func(c *Config, on bool) error {
			if on {
				delete(c.INI, "opcache.validate_timestamps")
			} else {
				c.SetINI("opcache.validate_timestamps", "0")
			}
			return nil
		})
	k.CPUOnly, k.Skip = true, needsOpcache("")
	return k
}

// needsOpcache skips a knob that only means something with opcache on; why is added to the reason.
func needsOpcache(why string) func(Facts, Config) string {
	return func(f Facts, c Config) string {
		if c.INI["opcache.enable"] == "0" {
			return "opcache is off" + why
		}
		return ""
	}
}

// RealpathCache is realpath_cache_size: PHP's cache of resolved paths. Only worth a trial when the app fills
// the default.
func RealpathCache() Knob {
	return Knob{
		Name:       "realpath_cache_size",
		Doc:        "realpath_cache_size: PHP's cache of resolved file paths (default 4096K)",
		CPUOnly:    true,
		Candidates: func(Config) []string { return []string{"", "16M"} },
		Get:        func(c Config) string { return c.INI["realpath_cache_size"] },
		Set: func(c *Config, v string) error {
			if v == "" {
				delete(c.INI, "realpath_cache_size")
				return nil
			}
			if _, err := bytesize.ParseConfig(v); err != nil {
				return fmt.Errorf("realpath_cache_size %q: want a size such as 16M", v)
			}
			c.SetINI("realpath_cache_size", v)
			return nil
		},
		Show: orDefault("4096K"),
		Skip: func(f Facts, c Config) string {
			if f.RealpathLimit == 0 {
				return "realpath cache use not read"
			}
			if f.RealpathUsed*5 < f.RealpathLimit*4 {
				return fmt.Sprintf("the app uses %d KiB of the %d KiB realpath cache", f.RealpathUsed>>10, f.RealpathLimit>>10)
			}
			return ""
		},
	}
}

// Preload is opcache.preload with the app's own preload script (relative to the docroot): its classes are
// compiled and linked once, in the master, for every request.
func Preload(script string) Knob {
	k := toggle("preload", "opcache.preload: the app's preload script, run once by the master",
		[]string{"off", "on"},
		func(c Config) bool { return c.Defines["opcache.preload"] != "" },
		func(c *Config, on bool) error {
			switch {
			case !on:
				delete(c.Defines, "opcache.preload")
			case script == "":
				return fmt.Errorf("preload: the app ships no preload script")
			default:
				c.SetSetting("opcache.preload", stack.DocrootVar+"/"+script)
			}
			return nil
		})
	k.CPUOnly = true
	k.Skip = func(f Facts, c Config) string {
		if script == "" {
			return "the app ships no preload script (preload.php or config/preload.php)"
		}
		return needsOpcache("")(f, c)
	}
	return k
}

// HugeCodePages is opcache.huge_code_pages: PHP's own machine code copied to huge pages at start-up (fewer
// iTLB misses). Credited only when the copy happened (tune checks smaps).
func HugeCodePages() Knob {
	k := toggle("huge_code_pages", "opcache.huge_code_pages: PHP's text on huge pages (reserved pages, or THP via madvise)",
		[]string{"off", "on"},
		func(c Config) bool { return c.Defines["opcache.huge_code_pages"] == "1" },
		func(c *Config, on bool) error {
			if on {
				c.SetSetting("opcache.huge_code_pages", "1")
			} else {
				delete(c.Defines, "opcache.huge_code_pages")
			}
			return nil
		})
	k.CPUTime = true
	k.Check = hugeCodeCheck
	k.Skip = func(f Facts, c Config) string {
		if why := needsOpcache(" (it does the remap)")(f, c); why != "" {
			return why
		}
		if f.THP == "never" && f.HugePages == 0 {
			return "the system gives no huge pages: reserve some (sysctl vm.nr_hugepages=64) or set " +
				"/sys/kernel/mm/transparent_hugepage/enabled to madvise, then tune again"
		}
		return ""
	}
	return k
}

// hugeCodeCheck credits huge code pages only when opcache really moved PHP's text to huge pages (DESIGN 4):
// otherwise both arms run the same program and trials would only measure noise.
func hugeCodeCheck(pid int) (string, error) {
	hp, err := measure.ReadHugePages(pid, "1")
	if err != nil {
		return "", err
	}
	if !hp.TextRemapped || hp.TextHugeBytes == 0 {
		return "", fmt.Errorf("smaps shows PHP's text still on 4 KiB pages")
	}
	how := "transparent huge pages"
	if hp.HugePagesTotal > 0 {
		how = "huge pages"
	}
	return fmt.Sprintf("PHP's text on %s (%d of %d MiB)", how, hp.TextHugeBytes>>20, hp.TextBytes>>20), nil
}

// FastCGIBuffers is nginx's buffering of php-fpm's responses: a response larger than the buffers goes to a
// temporary file when the client reads slower than PHP writes.
func FastCGIBuffers() Knob {
	return Knob{
		Name:       "fastcgi_buffers",
		Doc:        "nginx fastcgi_buffers: memory for a response before it spills to a temporary file (default 8 4k)",
		Candidates: func(c Config) []string { return []string{"", "16 16k"} },
		Get:        func(c Config) string { return c.FastCGIBuffers },
		Set: func(c *Config, v string) error {
			if v != "" {
				if _, err := BuffersBytes(v); err != nil {
					return fmt.Errorf("fastcgi_buffers %q: %v", v, err)
				}
			}
			c.FastCGIBuffers = v
			return nil
		},
		Show: orDefault("8 4k"),
		Skip: func(f Facts, c Config) string {
			if f.MaxResponse > 0 && f.MaxResponse <= defaultFastCGIBuffers {
				return fmt.Sprintf("the largest response (%d KiB) fits nginx's default buffers (%d KiB)", (f.MaxResponse+1023)>>10, defaultFastCGIBuffers>>10)
			}
			return ""
		},
	}
}

// defaultFastCGIBuffers is nginx's default on x86-64: fastcgi_buffer_size 4k plus fastcgi_buffers 8 4k.
const defaultFastCGIBuffers = 9 * 4096

// BuffersBytes is the memory of an nginx "N SIZE" buffers value.
func BuffersBytes(v string) (int64, error) {
	n, size, ok := strings.Cut(strings.TrimSpace(v), " ")
	cnt, err := strconv.Atoi(n)
	if !ok || err != nil || cnt < 2 || cnt > 1024 {
		return 0, fmt.Errorf("want NUMBER SIZE, as in 16 16k")
	}
	b, err := bytesize.ParseConfig(strings.TrimSpace(size))
	if err != nil || b < 1024 || b > 1<<20 {
		return 0, fmt.Errorf("want NUMBER SIZE, as in 16 16k")
	}
	return int64(cnt) * b, nil
}

// Binary is the PHP build itself: php-fpm binaries given to tune compete (first = start).
func Binary(binaries []string) Knob {
	return Knob{
		Name:       "php",
		Doc:        "the php-fpm binary (a PGO build against Debian's, say)",
		CPUTime:    true,
		Candidates: func(Config) []string { return append([]string(nil), binaries...) },
		Get:        func(c Config) string { return c.PHPFPM },
		Set: func(c *Config, v string) error {
			for _, b := range binaries {
				if b == v {
					c.PHPFPM = v
					return nil
				}
			}
			return fmt.Errorf("php %q: not one of the binaries given with --php-fpm", v)
		},
		Show: func(v string) string {
			if v == "" {
				return "the installed php-fpm"
			}
			return v
		},
		Skip: func(f Facts, c Config) string {
			if len(binaries) < 2 {
				return "one php-fpm binary: give --php-fpm twice or more to compare builds"
			}
			return ""
		},
	}
}

// OpcacheMemory is opcache's three sizes: shared memory, interned strings buffer and the most scripts it keeps
// (opcache.memory_consumption MiB, opcache.interned_strings_buffer MiB, opcache.max_accelerated_files), as one
// value "256/16/20000" (slashes: --knob separates values with commas) ("" = PHP's defaults 128,8,10000). Worth a trial only when the app fills one of them:
// then scripts are compiled again and again, or strings copied into every request.
func OpcacheMemory() Knob {
	return Knob{
		Name:       "opcache_memory",
		Doc:        "opcache.memory_consumption, interned_strings_buffer and max_accelerated_files, when the app fills them",
		Candidates: func(Config) []string { return []string{""} },
		Suggest: func(f Facts, c Config) []string {
			u := f.Opcache
			if u == nil {
				return nil
			}
			mem := u.MemoryUsed + u.MemoryFree + u.MemoryWasted
			strs := u.InternedUsed + u.InternedFree
			m, s, k := max(mem>>20, 128), max(strs>>20, 8), max(u.MaxKeys, 10000)
			// Room for twice what is used now, in the round sizes people configure.
			for m < 2*(u.MemoryUsed+u.MemoryWasted)>>20 {
				m *= 2
			}
			for s < 2*u.InternedUsed>>20 {
				s *= 2
			}
			for k < 2*u.Keys {
				k *= 2
			}
			return []string{OpcacheUse{}.format(m, s, k)}
		},
		Get: func(c Config) string {
			m, s, k := c.Defines["opcache.memory_consumption"], c.Defines["opcache.interned_strings_buffer"], c.Defines["opcache.max_accelerated_files"]
			if m == "" && s == "" && k == "" {
				return ""
			}
			return m + "/" + s + "/" + k
		},
		Set: func(c *Config, v string) error {
			if v == "" {
				for _, k := range []string{"opcache.memory_consumption", "opcache.interned_strings_buffer", "opcache.max_accelerated_files"} {
					delete(c.Defines, k)
				}
				return nil
			}
			parts := strings.Split(v, "/")
			if len(parts) != 3 {
				return fmt.Errorf("opcache_memory %q: want MEMORY_MIB/STRINGS_MIB/FILES, as in 256/16/20000", v)
			}
			for i, key := range []string{"opcache.memory_consumption", "opcache.interned_strings_buffer", "opcache.max_accelerated_files"} {
				n, err := strconv.Atoi(parts[i])
				if err != nil || n < 1 {
					return fmt.Errorf("opcache_memory %q: want MEMORY_MIB/STRINGS_MIB/FILES, as in 256/16/20000", v)
				}
				c.SetSetting(key, strconv.Itoa(n))
			}
			return nil
		},
		Show: orDefault("128/8/10000"),
		Skip: func(f Facts, c Config) string {
			if c.INI["opcache.enable"] == "0" {
				return "opcache is off"
			}
			u := f.Opcache
			if u == nil {
				return "opcache's state not read"
			}
			if why := u.Full(); why == "" {
				return fmt.Sprintf("the app fits opcache: %d of %d MiB used, %d of %d scripts, %d of %d MiB interned strings",
					u.MemoryUsed>>20, (u.MemoryUsed+u.MemoryFree+u.MemoryWasted)>>20, u.Keys, u.MaxKeys, u.InternedUsed>>20, (u.InternedUsed+u.InternedFree)>>20)
			}
			return ""
		},
	}
}

func (OpcacheUse) format(m, s, k int64) string { return fmt.Sprintf("%d/%d/%d", m, s, k) }

// Full says which of opcache's limits the app reaches ("" = none): less than 5% of memory or strings free,
// the cache marked full, or keys above 90% of the limit.
func (u OpcacheUse) Full() string {
	var why []string
	if u.CacheFull {
		why = append(why, "opcache reports the cache full")
	}
	if total := u.MemoryUsed + u.MemoryFree + u.MemoryWasted; total > 0 && u.MemoryFree*20 < total {
		why = append(why, "under 5% of its memory free")
	}
	if total := u.InternedUsed + u.InternedFree; total > 0 && u.InternedFree*20 < total {
		why = append(why, "under 5% of the interned strings buffer free")
	}
	if u.MaxKeys > 0 && u.Keys*10 > u.MaxKeys*9 {
		why = append(why, "over 90% of max_accelerated_files used")
	}
	return strings.Join(why, ", ")
}
