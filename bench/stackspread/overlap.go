package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/phptune/phptune/bench/internal/demostack"
	"github.com/phptune/phptune/internal/stats"
)

// Kinds of background start.
const (
	fullStart   = iota // tune's start of a twin: launch, check, warm; then stop
	launchStart        // launch and check only; then stop
	kinds
)

var kindName = [kinds]string{"full start", "launch+check"}

type event struct {
	kind       int
	start, end time.Time
}

// measureOverlap runs more rounds on bt's stacks while a background loop starts and stops fresh stacks, with
// pauses as long as a start between them, and prints what a trial that a start overlapped by half or more
// lost or gained against its stack's level and its round's clean trials, and how much noisier it was.
func (b *bench) measureOverlap(ctx context.Context, bt *batch) error {
	var level [metrics][]float64
	for m := range metrics {
		sm, _, _ := means(values(bt.got[m]))
		level[m] = sm
	}
	ov := &batch{sts: bt.sts}
	bgCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var events []event
	var bgErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		events, bgErr = b.starter(bgCtx)
	}()
	err := b.rounds(ctx, ov, b.o.overlap)
	cancel()
	wg.Wait()
	if err != nil {
		return err
	}
	if bgErr != nil {
		return bgErr
	}
	fmt.Printf("\n%d rounds with stack starts in the background (%d starts)\n", b.o.overlap, len(events))
	fmt.Printf("%-8s %-13s %7s %12s %12s\n", "metric", "trials", "number", "level", "residual sd")
	for m := range metrics {
		res, over := residuals(ov.got[m], level[m], events)
		for _, row := range summarize(res, over) {
			fmt.Printf("%-8s %-13s %7d %+11.1f%% %11.1f%%\n", metricName[m], row.name, row.n, 100*row.mean, 100*row.sd)
		}
	}
	fmt.Println("level: a trial's figure against its stack's level and its round's clean trials (clean: no start overlapped it)")
	return nil
}

// starter starts and stops fresh stacks, the kinds in turn, pausing a random time up to twice the last start's
// between them, until ctx ends.
func (b *bench) starter(ctx context.Context) ([]event, error) {
	rng := rand.New(rand.NewPCG(7, 7))
	var events []event
	for i := 0; ; i++ {
		kind := i % kinds
		began := time.Now()
		err := b.startStop(ctx, kind)
		if ctx.Err() != nil {
			return events, nil
		}
		if err != nil {
			return events, err
		}
		took := time.Since(began)
		events = append(events, event{kind: kind, start: began, end: time.Now()})
		select {
		case <-ctx.Done():
			return events, nil
		case <-time.After(time.Duration(rng.Float64() * 2 * float64(took))):
		}
	}
}

func (b *bench) startStop(ctx context.Context, kind int) error {
	if kind == fullStart {
		st, err := b.startOne(ctx)
		if err != nil {
			return err
		}
		return st.Stop(context.Background())
	}
	st, err := demostack.Start(ctx, b.config())
	if err != nil {
		return err
	}
	defer st.Stop(context.Background())
	return b.check(ctx, st)
}

// residuals are each trial's log figure less its stack's level and its round's effect (the mean of the round's
// clean trials against their levels), with the share of the trial each kind of start overlapped.
func residuals(got [][]trial, level []float64, events []event) (res [][]float64, over [][][kinds]float64) {
	res, over = make([][]float64, len(got)), make([][][kinds]float64, len(got))
	for s, row := range got {
		for _, t := range row {
			var f [kinds]float64
			for _, e := range events {
				lo, hi := later(t.start, e.start), earlier(t.end, e.end)
				if hi.After(lo) {
					f[e.kind] += hi.Sub(lo).Seconds() / t.end.Sub(t.start).Seconds()
				}
			}
			over[s] = append(over[s], f)
			res[s] = append(res[s], t.y-level[s])
		}
	}
	for r := range got[0] {
		sum, n := 0.0, 0
		for s := range got {
			if over[s][r] == ([kinds]float64{}) {
				sum += res[s][r]
				n++
			}
		}
		for s := range got {
			if n == 0 {
				res[s][r] = math.NaN() // no clean trial to set the round's level
			} else {
				res[s][r] -= sum / float64(n)
			}
		}
	}
	return res, over
}

type summary struct {
	name     string
	n        int
	mean, sd float64
}

// summarize groups the residuals: clean trials, and those half or more overlapped by each kind of start.
func summarize(res [][]float64, over [][][kinds]float64) []summary {
	groups := make([][]float64, kinds+1)
	for s := range res {
		for r, e := range res[s] {
			if math.IsNaN(e) {
				continue
			}
			f := over[s][r]
			switch {
			case f == [kinds]float64{}:
				groups[kinds] = append(groups[kinds], e)
			case f[fullStart] >= 0.5:
				groups[fullStart] = append(groups[fullStart], e)
			case f[launchStart] >= 0.5:
				groups[launchStart] = append(groups[launchStart], e)
			}
		}
	}
	names := append(kindName[:], "clean")
	var out []summary
	for k := kinds; k >= 0; k-- {
		m, sd := stats.MeanSD(groups[k])
		out = append(out, summary{name: names[k], n: len(groups[k]), mean: m, sd: sd})
	}
	return out
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
