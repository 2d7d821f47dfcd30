// Package demostack starts the bundled demo app on a private stack for the bench commands, and gives its URL
// mix as the demo preset defines it.
package demostack

import (
	"context"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/workload"
	"github.com/phptune/phptune/workloads"
)

// Start serves the demo with cfg's pool and nginx settings (knob.Config.Apply), stopping fast.
func Start(ctx context.Context, cfg knob.Config) (*stack.Stack, error) {
	sc := stack.Config{AppFS: workloads.Demo(), FastStop: true}
	cfg.Apply(&sc, "www")
	return stack.Start(ctx, sc)
}

// Mix is the demo preset's URLs with their weights.
func Mix() ([]load.MixItem, error) {
	p, err := workload.Lookup("demo")
	if err != nil {
		return nil, err
	}
	var mix []load.MixItem
	for _, u := range p.URLs {
		mix = append(mix, load.MixItem{URI: u.Path, Weight: u.Weight})
	}
	return mix, nil
}
