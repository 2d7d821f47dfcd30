// Package demostack starts apps on private stacks for the bench commands: the bundled demo, or a workload
// preset's app (workload.PresetApp) through StartApp, its services run by WithPreset; and gives the demo's URL mix
// as the demo preset defines it.
package demostack

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/workload"
	"github.com/phptune/phptune/workloads"
)

// Start serves the demo with cfg's pool and nginx settings (knob.Config.Apply), stopping fast.
func Start(ctx context.Context, cfg knob.Config) (*stack.Stack, error) {
	return StartApp(ctx, stack.Config{AppFS: workloads.Demo()}, cfg)
}

// StartApp serves the app of template (a preset's workload.App.Stack: its docroot or embedded files, front
// controller, writable paths) with cfg's pool and nginx settings, stopping fast. template is taken by value, and
// Apply sets the pools and nginx settings afresh, so that the stacks of one template share nothing they change.
// A preset's services (its database) are the caller's to start first, once for all its stacks.
func StartApp(ctx context.Context, template stack.Config, cfg knob.Config) (*stack.Stack, error) {
	template.FastStop = true
	cfg.Apply(&template, "www")
	return stack.Start(ctx, template)
}

// WithPreset runs f on the prepared preset name's app with its services (its database) started for the whole
// run, and stopped on every path, an interrupt or SIGTERM included (ctx is cancelled then, so f's deferred stops
// run too); a service that exits under f is said (workload.Services.During). An unknown name's error names the
// nearest preset, an unprepared one's says to prepare it: one line each, passed through.
func WithPreset(name string, f func(ctx context.Context, app *workload.App) error) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	app, err := workload.PresetApp(name)
	if err != nil {
		return err
	}
	svc, err := app.StartServices(ctx)
	defer svc.Stop(context.Background())
	if err != nil {
		return err
	}
	return svc.During(ctx, func(ctx context.Context) error { return f(ctx, app) })
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

// CPUTrial runs o's requests on st and reads php-fpm's CPU time before the first and after the last, as tune's
// CPU trials do: every request's whole cost falls inside.
func CPUTrial(ctx context.Context, st *stack.Stack, o load.Options) (*load.Result, time.Duration, error) {
	r, err := load.NewRunner(o)
	if err != nil {
		return nil, 0, err
	}
	pg := st.PID("php-fpm")
	c0, err := measure.GroupCPU(pg)
	if err != nil {
		return nil, 0, err
	}
	res, err := r.Trial(ctx, 0, 0)
	if err != nil {
		return nil, 0, err
	}
	c1, err := measure.GroupCPU(pg)
	if err != nil {
		return nil, 0, err
	}
	return res, max(c1-c0, time.Microsecond), nil
}
