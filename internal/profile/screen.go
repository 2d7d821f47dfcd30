package profile

import (
	"context"
	"fmt"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/phpini"
	"github.com/phptune/phptune/internal/stack"
)

// Counters count a configuration's work per request, for tune's screening: instructions with php-cgi under
// callgrind (no server needed) and system calls with strace on a php-fpm pool of its own.
type Counters struct {
	Instructions func(ctx context.Context, cfg knob.Config) (float64, error)
	Syscalls     func(ctx context.Context, cfg knob.Config) (float64, error)
	Method       string // how they count, for the result
}

// NewCounters counts on sc's app with urls() as they are when it counts (after a URL file's login, with its
// session), each sent as req. Nil, with the missing program's name, when valgrind, strace or php-cgi of
// php-fpm's version is not installed.
func NewCounters(sc stack.Config, urls func() []load.MixItem, req load.Request) (*Counters, string) {
	if _, err := measure.FindValgrind(""); err != nil {
		return nil, "valgrind"
	}
	if _, err := measure.FindStrace(); err != nil {
		return nil, "strace"
	}
	// Instructions are counted on php-cgi of php-fpm's version.
	if fpm, err := stack.FindPHPFPM(sc.PHPFPM); err == nil {
		if _, err := measure.FindPHPCGI("", fpm); err != nil {
			if v := phpini.Version(fpm); v != "" {
				return nil, "php" + v + "-cgi"
			}
			return nil, "php-cgi"
		}
	}
	return &Counters{
		Method: "instructions: callgrind on php-cgi; syscalls: strace on php-fpm",
		Instructions: func(ctx context.Context, cfg knob.Config) (float64, error) {
			// One warm-up and two measured requests a URL: the counts repeat to a few parts in ten thousand.
			po := Options{Stack: sc, URLs: urls(), Request: req, InstrWarmup: 1, InstrN: 2}
			instr, _, err := ScreenInstructions(ctx, po, cfg)
			return instr, err
		},
		Syscalls: func(ctx context.Context, cfg knob.Config) (float64, error) {
			po := Options{Stack: sc, URLs: urls(), Request: req, NoInstructions: true, Requests: 100, Warmup: 2,
				Variants: []Variant{{Name: "screen", Config: cfg}}}
			pr, err := Run(ctx, po)
			if err != nil {
				return 0, err
			}
			if len(pr.Variants) == 0 {
				return 0, fmt.Errorf("count system calls: no result")
			}
			if e := pr.Variants[0].Error; e != "" {
				return 0, fmt.Errorf("count system calls: %s", e)
			}
			return pr.Variants[0].SyscallsPerReq, nil
		},
	}, ""
}
