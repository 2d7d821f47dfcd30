package tune

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/measure"
	"github.com/phptune/phptune/internal/stack"
)

// TestSettleGrowsAFreshDynamicPool: a fresh pm=dynamic arm is brought up to the workers the load keeps busy
// before anything measures it (real php-fpm; every request waits 20 ms, so 16 connections keep 16 workers busy).
func TestSettleGrowsAFreshDynamicPool(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.php"), []byte("<?php usleep(20000); echo \"ok\\n\";\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := knob.Debian()
	cfg.PM, cfg.MaxChildren = "dynamic", 16
	tr, err := newTuner(Options{Stack: stack.Config{App: dir}, Base: cfg, Budget: time.Minute, Pins: map[string]string{}})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.stopAll()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	total := func(a *arm) int {
		st, err := measure.ReadFPMStatus(ctx, a.pool.Network, a.pool.Address, a.pool.StatusPath)
		if err != nil {
			t.Fatal(err)
		}
		return st.TotalProcesses
	}
	cold, err := tr.arm(ctx, cfg) // t.conc is 0 before the saturation sweep: no settling
	if err != nil {
		t.Fatal(err)
	}
	before := total(cold)
	tr.drop(cold)
	tr.conc = 16
	began := time.Now()
	warm, err := tr.arm(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	after := total(warm)
	t.Logf("workers: %d fresh, %d after settling for %s", before, after, time.Since(began).Round(time.Millisecond))
	if after < 12 || after <= before {
		t.Errorf("%d workers after settling (%d fresh): want about the 16 the load keeps busy", after, before)
	}
	if d := time.Since(began); d > maxSettle+5*time.Second {
		t.Errorf("settling took %s, beyond its bound", d)
	}
}
