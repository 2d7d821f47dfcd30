// Package measure watches what the server does: php-fpm's status page read straight over FastCGI, and
// (later) /proc, strace and callgrind.
package measure

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/phptune/phptune/internal/fcgi"
	"github.com/phptune/phptune/internal/textline"
)

// FPMStatus is php-fpm's status page (?json&full).
type FPMStatus struct {
	Pool               string       `json:"pool"`
	PM                 string       `json:"process manager"`
	StartSince         int64        `json:"start since"`
	AcceptedConn       int64        `json:"accepted conn"`
	ListenQueue        int64        `json:"listen queue"`
	MaxListenQueue     int64        `json:"max listen queue"`
	ListenQueueLen     int64        `json:"listen queue len"`
	IdleProcesses      int          `json:"idle processes"`
	ActiveProcesses    int          `json:"active processes"`
	TotalProcesses     int          `json:"total processes"`
	MaxActiveProcesses int          `json:"max active processes"`
	MaxChildrenReached int64        `json:"max children reached"`
	SlowRequests       int64        `json:"slow requests"`
	Processes          []FPMProcess `json:"processes"`
}

// FPMProcess is one worker in the status page's full list.
type FPMProcess struct {
	PID               int     `json:"pid"`
	State             string  `json:"state"`
	Requests          int64   `json:"requests"`
	RequestDuration   int64   `json:"request duration"`
	RequestURI        string  `json:"request uri"`
	Script            string  `json:"script"`
	LastRequestCPU    float64 `json:"last request cpu"`
	LastRequestMemory int64   `json:"last request memory"`
}

// ReadFPMStatus reads the status page at path (pm.status_path) from the pool at network/address. It takes a
// worker like any request, so it waits when every worker is busy: bound it with ctx.
func ReadFPMStatus(ctx context.Context, network, address, path string) (*FPMStatus, error) {
	params := fcgi.CGIParams(fcgi.CGIOptions{ScriptFilename: path, ScriptName: path, DocumentRoot: "/", QueryString: "json&full"})
	status, body, stderr, err := fcgi.Get(ctx, network, address, params)
	if err != nil {
		return nil, fmt.Errorf("read php-fpm status %s from %s: %w", path, address, err)
	}
	if status != 200 {
		return nil, fmt.Errorf("php-fpm status %s from %s: status %d %s: is pm.status_path set to %s?", path, address, status, textline.First(string(stderr)), path)
	}
	var st FPMStatus
	if err := json.Unmarshal(body, &st); err != nil {
		return nil, fmt.Errorf("php-fpm status %s from %s: not the status page (%v): is pm.status_path set to %s?", path, address, err, path)
	}
	return &st, nil
}

// States counts workers by state from the per-process list: the "active processes" counter is wrong under
// keep-alive (DESIGN 4), the list is not.
func (s *FPMStatus) States() map[string]int {
	m := map[string]int{}
	for _, p := range s.Processes {
		m[p.State]++
	}
	return m
}

// Workers counts the pool's workers from the per-process list ("total processes" follows the active counter,
// which drifts under keep-alive), or falls back to the counter without the full list.
func (s *FPMStatus) Workers() int {
	if len(s.Processes) > 0 {
		return len(s.Processes)
	}
	return s.TotalProcesses
}

// FPMDelta is what a pool did between two status reads around a run.
type FPMDelta struct {
	Pool string `json:"pool"`
	PM   string `json:"pm"`
	// Accepted is php-fpm's "accepted conn": it counts request reads, so a kept FastCGI connection adds one
	// more when it closes.
	Accepted           int64          `json:"accepted_conn"`
	MaxChildrenReached int64          `json:"max_children_reached"`
	MaxListenQueue     int64          `json:"max_listen_queue"`
	SlowRequests       int64          `json:"slow_requests"`
	ProcessesBefore    int            `json:"processes_before"`
	ProcessesAfter     int            `json:"processes_after"`
	StatesAfter        map[string]int `json:"states_after"`
	// PeakRequestMemory is the largest "last request memory" of the workers after the run: PHP's own peak
	// (memory_get_peak_usage) of a request, which sampling /proc between requests can miss.
	PeakRequestMemory int64         `json:"peak_request_memory"`
	Elapsed           time.Duration `json:"-"`
}

// Delta compares two reads of the same pool; the reads themselves count as accepted connections, and are not
// subtracted: they are two among thousands.
func Delta(before, after *FPMStatus) FPMDelta {
	return FPMDelta{
		Pool: after.Pool, PM: after.PM,
		Accepted:           after.AcceptedConn - before.AcceptedConn,
		MaxChildrenReached: after.MaxChildrenReached - before.MaxChildrenReached,
		MaxListenQueue:     after.MaxListenQueue,
		SlowRequests:       after.SlowRequests - before.SlowRequests,
		ProcessesBefore:    before.Workers(),
		ProcessesAfter:     after.Workers(),
		StatesAfter:        after.States(),
		PeakRequestMemory:  after.peakRequestMemory(),
	}
}

func (s *FPMStatus) peakRequestMemory() int64 {
	var m int64
	for _, p := range s.Processes {
		m = max(m, p.LastRequestMemory)
	}
	return m
}
