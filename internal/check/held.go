package check

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/phptune/phptune/internal/measure"
)

// A pool whose every worker is held cannot answer its status page: what check knows of it then comes from the
// kernel (the accept queue) and /proc (its workers' states), neither of which needs a worker.

// heldObs is what /proc showed of the pool's workers when a status read went unanswered.
type heldObs struct {
	at      time.Time
	workers []measure.WorkerState
}

// Held is what /proc showed of the workers while the status page went unanswered.
type Held struct {
	Reads int `json:"reads"`
	// Workers and Busy are at the read with the most busy: the workers, and those not idle in accept().
	Workers int                   `json:"workers"`
	Busy    int                   `json:"busy"`
	States  []measure.WorkerState `json:"states"`
}

// readHeld reads the pool's workers' states from /proc: nil when its master or name is unknown.
func readHeld(t Target) *heldObs {
	if t.MasterPID <= 0 || t.Name == "" {
		return nil
	}
	pids, err := measure.PoolWorkers(t.MasterPID, t.Name)
	if err != nil || len(pids) == 0 {
		return nil
	}
	h := &heldObs{at: time.Now()}
	for _, pid := range pids {
		if w, err := measure.ReadWorkerState(pid); err == nil {
			h.workers = append(h.workers, w)
		}
	}
	return h
}

// heldOf sums up the reads: the one with the most workers busy.
func heldOf(w window) *Held {
	if len(w.held) == 0 {
		return nil
	}
	h := &Held{Reads: len(w.held), Busy: -1}
	for _, o := range w.held {
		busy := 0
		for _, s := range o.workers {
			if !s.Idle() {
				busy++
			}
		}
		if busy > h.Busy {
			h.Workers, h.Busy, h.States = len(o.workers), busy, o.workers
		}
	}
	return h
}

// Doing counts the workers by what they do: "2 in clock_nanosleep, 1 idle (in accept)".
func (h *Held) Doing() string {
	counts := map[string]int{}
	var kinds []string
	for _, s := range h.States {
		d := s.Doing()
		if counts[d] == 0 {
			kinds = append(kinds, d)
		}
		counts[d]++
	}
	slices.Sort(kinds)
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
	}
	return strings.Join(parts, ", ")
}

// keptConns says the busy workers all wait in read() on their connection: between requests on a kept
// connection (nginx's fastcgi_keep_conn), or reading a request's body; /proc does not tell which.
func (h *Held) keptConns() bool {
	for _, s := range h.States {
		if !s.Idle() && s.Syscall != "read" && s.Syscall != "recvfrom" {
			return false
		}
	}
	return h.Busy > 0
}

// unansweredHeld is the finding of a pool whose status page went unanswered: every worker held, named with
// pm.max_children, the queue's depth and what /proc showed of the workers.
func unansweredHeld(p *Pool, tn tuneCmd) (*Finding, Suggestion) {
	mc, q, h := p.Settings.MaxChildren, p.Queue, p.Held
	f := &Finding{ID: FindUnanswered}
	limit := "pm.max_children unknown"
	if mc > 0 {
		limit = fmt.Sprintf("pm.max_children = %d", mc)
	}
	switch {
	case h != nil && h.Busy == h.Workers:
		f.Title = fmt.Sprintf("every worker held (%d of %d busy, %s), %d connection(s) waiting: the status page went unanswered for %s, %d time(s)",
			h.Busy, h.Workers, limit, q.Peak, statusTimeout, p.StatusMissed)
	default:
		f.Title = fmt.Sprintf("the status page went unanswered for %s, %d time(s), %d connection(s) waiting: every worker was held (%s)",
			statusTimeout, p.StatusMissed, q.Peak, limit)
	}
	if h != nil {
		f.Evidence = append(f.Evidence, fmt.Sprintf("workers in /proc: %d of %d held: %s", h.Busy, h.Workers, h.Doing()))
		if h.keptConns() {
			f.Evidence = append(f.Evidence, "they wait in read() on their connections: kept FastCGI connections (nginx's fastcgi_keep_conn) hold a "+
				"worker between requests, or a request's body is being read; /proc does not tell which")
		}
	}
	f.Evidence = append(f.Evidence,
		fmt.Sprintf("listen queue: peak %d of backlog %d, connections waiting in %.0f%% of %d samples (%s)", q.Peak, q.Backlog, 100*q.NonZero,
			p.QueueSamples, q.Source),
		fmt.Sprintf("%d of %d status reads got no worker within %s: long requests, or kept connections (nginx's keepalive to php-fpm) holding "+
			"every worker", p.StatusMissed, p.StatusMissed+p.Samples, statusTimeout))
	return f, heldSuggestion(p, tn)
}

// heldSuggestion is pm.max_children for the busy workers and the connections waiting, or, when kept
// connections hold the workers, fewer kept connections.
func heldSuggestion(p *Pool, tn tuneCmd) Suggestion {
	mc, h := p.Settings.MaxChildren, p.Held
	if mc <= 0 || h == nil || h.Busy < mc {
		return Suggestion{}
	}
	demand := h.Busy + p.Queue.Peak
	why := fmt.Sprintf("%d connections at once at the peak (%d workers held + %d waiting)", demand, h.Busy, p.Queue.Peak)
	if h.keptConns() {
		why += fmt.Sprintf("; or keep fewer than %d connections to the pool (nginx's upstream keepalive)", mc)
	}
	if m := p.Memory; m.Fits > 0 {
		demand = min(demand, m.Fits)
	} else {
		why += "; the workers' memory was not read (no status page): check what the pool has before applying it"
	}
	return Suggestion{Setting: "pm.max_children", Current: fmt.Sprint(mc), Suggested: fmt.Sprint(max(demand, mc+1)), Why: why,
		Verify: tn.with("") + tn.memory()}
}
