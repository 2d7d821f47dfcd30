package main

import (
	"github.com/spf13/pflag"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/k6"
	"github.com/phptune/phptune/internal/load"
)

// engineFlags choose the load generator: phptune's own, or k6 (one or several instances, here or over ssh).
type engineFlags struct {
	engine    string
	bin       string
	instances int
	hosts     []string
	ssh       string
	remote    string
}

func (f *engineFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.engine, "engine", "phptune", "load `GENERATOR`: phptune (its own, HTTP and FastCGI) or k6 (Grafana k6, HTTP)")
	fl.StringVar(&f.bin, "k6", "k6", "with --engine k6: the k6 `BINARY` (default: k6 on PATH, else bin/k6 beside phptune: make k6)")
	fl.IntVar(&f.instances, "k6-instances", 1, "with --engine k6: split each trial among this many k6 instances, points merged")
	fl.StringArrayVar(&f.hosts, "k6-host", nil, "with --engine k6: run the instances on this ssh `HOST` ([user@]host or "+
		"ssh://user@host:port; repeatable, round robin; default here)")
	fl.StringVar(&f.ssh, "k6-ssh", "ssh", "with --k6-host: the ssh `COMMAND` and its options, e.g. 'ssh -F ./ssh_config'")
	fl.StringVar(&f.remote, "k6-remote", "k6", "with --k6-host: the k6 `BINARY` on the hosts")
}

// engineOf is the engine the flags choose for a run of o: nil for phptune's own.
func (f *engineFlags) engineOf(o load.Options) (load.Engine, error) {
	switch f.engine {
	case "phptune", "":
		if f.instances != 1 || len(f.hosts) > 0 {
			return nil, exitcode.UsageErrorf("--k6-instances and --k6-host need --engine k6")
		}
		return nil, nil
	case "k6":
	default:
		return nil, exitcode.UsageErrorf("--engine %q: want phptune or k6", f.engine)
	}
	e, err := k6.New(o.Target, f.instances, f.hosts, f.ssh, f.remote, f.bin)
	if err != nil {
		return nil, err
	}
	return e, nil
}
