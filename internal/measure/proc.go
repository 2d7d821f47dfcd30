package measure

// Reading processes from /proc: CPU from /proc/PID/stat, memory from /proc/PID/smaps_rollup, process groups by
// one pass over /proc. Plain open/read/close with a reused buffer keeps a sample of tens of workers cheap.
//
// github.com/prometheus/procfs was considered (DESIGN 5) and not used: its smaps_rollup type has no
// AnonHugePages, its @latest raises the module's go directive (1.23 -> 1.26) and adds golang.org/x/sys, and what
// we need (three small files, one process-group scan) is about as many lines as the calls to it would be.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// ticksPerSecond is USER_HZ, the unit of the times in /proc/PID/stat. It is 100 on every Linux architecture
// (sysconf(_SC_CLK_TCK) reports it; the kernel converts its internal HZ to it), so a CPU time read from /proc is
// a multiple of 10 ms.
const ticksPerSecond = 100

func ticksToDuration(t int64) time.Duration { return time.Duration(t) * (time.Second / ticksPerSecond) }

// ProcStat is one process at one moment.
type ProcStat struct {
	PID   int
	PPID  int
	PGID  int
	State string // "R", "S", "D", "Z", ... as in /proc/PID/stat
	Comm  string // e.g. "php-fpm8.2", "nginx"
	// Cmdline is argv joined by spaces: "php-fpm: pool www" (php-fpm rewrites it), "nginx: worker process".
	Cmdline string
	// CPU is utime+stime so far, all threads; children's time (cutime, cstime) is not included.
	CPU time.Duration
	// Memory in bytes, from /proc/PID/smaps_rollup. USS = Private_Clean + Private_Dirty; RSS = USS +
	// SharedClean + SharedDirty.
	RSS, PSS, USS, SharedClean, SharedDirty, Swap int64
	AnonHugePages                                 int64 // anonymous memory backed by transparent huge pages
}

// ReadProc reads process pid. A process that is gone (or a zombie, which has no memory left to read) gives an
// error wrapping os.ErrNotExist: workers come and go.
func ReadProc(pid int) (ProcStat, error) {
	buf := make([]byte, 4096)
	st, buf, err := readStat(pid, buf)
	if err != nil {
		return ProcStat{}, err
	}
	var cmdline string
	if b, err := readProcFile(procPath(pid, "cmdline"), buf); err == nil {
		buf = b[:0]
		cmdline = string(bytes.TrimSpace(bytes.ReplaceAll(bytes.TrimRight(b, "\x00"), []byte{0}, []byte{' '})))
	} else if !isGone(err) {
		return ProcStat{}, fmt.Errorf("process %d: %w", pid, err)
	}
	m, _, err := readMem(pid, buf)
	if err != nil {
		return ProcStat{}, err
	}
	return ProcStat{
		PID: st.pid, PPID: st.ppid, PGID: st.pgrp, State: string(st.state), Comm: st.comm, Cmdline: cmdline,
		CPU: ticksToDuration(st.ticks),
		RSS: m.rss, PSS: m.pss, USS: m.privateClean + m.privateDirty,
		SharedClean: m.sharedClean, SharedDirty: m.sharedDirty, Swap: m.swap, AnonHugePages: m.anonHuge,
	}, nil
}

// ProcessGroup lists the pids whose process group is pgid, ascending, zombies included: a
// worker that has exited but is not yet reaped still holds its CPU time. php-fpm's master and workers share one
// group, and so do nginx's master and workers.
func ProcessGroup(pgid int) ([]int, error) {
	groups, _, err := scanGroups(map[int]bool{pgid: true}, make([]byte, 4096))
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, st := range groups[pgid] {
		pids = append(pids, st.pid)
	}
	slices.Sort(pids)
	return pids, nil
}

// statLine is the part of /proc/PID/stat we use.
type statLine struct {
	pid, ppid, pgrp int
	comm            string
	state           byte
	ticks           int64  // utime + stime
	childTicks      int64  // cutime + cstime: children this process has reaped (waited for)
	start           uint64 // starttime: tells a reused pid from the process seen before
}

// readStat reads /proc/PID/stat. buf is reused and returned (grown if it had to be).
func readStat(pid int, buf []byte) (statLine, []byte, error) {
	b, err := readProcFile(procPath(pid, "stat"), buf)
	if err != nil {
		return statLine{}, buf, gone(pid, err)
	}
	st, err := parseStat(b, true)
	if err != nil {
		return statLine{}, b[:0], fmt.Errorf("process %d: %w", pid, err)
	}
	return st, b[:0], nil
}

// parseStat parses a /proc/PID/stat line. The command sits in parentheses and may itself hold spaces and
// parentheses: the fields resume after the last ')'. withComm false skips allocating the command's string.
func parseStat(b []byte, withComm bool) (statLine, error) {
	open, close := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 1 || close < open {
		return statLine{}, fmt.Errorf("malformed stat %q", b)
	}
	var st statLine
	pid, ok := atoi(bytes.TrimSpace(b[:open]))
	if !ok {
		return statLine{}, fmt.Errorf("malformed stat %q", b)
	}
	st.pid = int(pid)
	if withComm {
		st.comm = string(b[open+1 : close])
	}
	// Fields 3 (state) to 22 (starttime), numbered as in proc(5).
	var f [23][]byte
	rest := b[close+1:]
	for i := 3; i < len(f); i++ {
		rest = bytes.TrimLeft(rest, " \n")
		end := bytes.IndexAny(rest, " \n")
		if end < 0 {
			end = len(rest)
		}
		if end == 0 {
			return statLine{}, fmt.Errorf("malformed stat %q: %d fields", b, i-1)
		}
		f[i], rest = rest[:end], rest[end:]
	}
	st.state = f[3][0]
	var n [23]int64
	for _, i := range []int{4, 5, 14, 15, 16, 17, 22} {
		v, ok := atoi(f[i])
		if !ok {
			return statLine{}, fmt.Errorf("malformed stat field %d %q", i, f[i])
		}
		n[i] = v
	}
	st.ppid, st.pgrp, st.start = int(n[4]), int(n[5]), uint64(n[22])
	st.ticks = n[14] + n[15]
	st.childTicks = n[16] + n[17]
	return st, nil
}

// memLine is the part of /proc/PID/smaps_rollup we use, in bytes.
type memLine struct {
	rss, pss, sharedClean, sharedDirty, privateClean, privateDirty, swap, anonHuge int64
}

// readMem reads /proc/PID/smaps_rollup (Linux 4.14+), or sums /proc/PID/smaps on older kernels: both are
// "Key: N kB" lines, smaps one set per mapping.
func readMem(pid int, buf []byte) (memLine, []byte, error) {
	b, err := readProcFile(procPath(pid, "smaps_rollup"), buf)
	if errors.Is(err, syscall.ENOENT) {
		if _, serr := os.Stat(procPath(pid, "")); serr == nil {
			b, err = readProcFile(procPath(pid, "smaps"), buf)
		}
	}
	if err != nil {
		return memLine{}, buf, gone(pid, err)
	}
	var m memLine
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		colon := bytes.IndexByte(line, ':')
		if colon < 0 || !bytes.HasSuffix(line, []byte(" kB")) {
			continue // a mapping's header line, VmFlags, THPeligible, ...
		}
		var dst *int64
		switch string(line[:colon]) {
		case "Rss":
			dst = &m.rss
		case "Pss":
			dst = &m.pss
		case "Shared_Clean":
			dst = &m.sharedClean
		case "Shared_Dirty":
			dst = &m.sharedDirty
		case "Private_Clean":
			dst = &m.privateClean
		case "Private_Dirty":
			dst = &m.privateDirty
		case "Swap":
			dst = &m.swap
		case "AnonHugePages":
			dst = &m.anonHuge
		default:
			continue
		}
		n, ok := atoi(bytes.TrimSpace(line[colon+1 : len(line)-3]))
		if !ok {
			return memLine{}, buf, fmt.Errorf("process %d: malformed smaps line %q", pid, line)
		}
		*dst += n * 1024
	}
	return m, buf, nil
}

// scanGroups reads /proc/PID/stat of every process once and keeps those whose process group is in pgids.
func scanGroups(pgids map[int]bool, buf []byte) (map[int][]statLine, []byte, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, buf, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, buf, fmt.Errorf("list /proc: %w", err)
	}
	out := make(map[int][]statLine, len(pgids))
	for _, name := range names {
		pid, ok := atoi([]byte(name))
		if !ok || pid <= 0 {
			continue
		}
		b, err := readProcFile(procPath(int(pid), "stat"), buf)
		if err != nil {
			if isGone(err) {
				continue
			}
			return nil, buf, gone(int(pid), err)
		}
		buf = b[:0]
		st, err := parseStat(b, false)
		if err != nil {
			return nil, buf, fmt.Errorf("process %d: %w", pid, err)
		}
		if pgids[st.pgrp] {
			out[st.pgrp] = append(out[st.pgrp], st)
		}
	}
	return out, buf, nil
}

// readProcFile reads a whole small /proc file into buf[:0] (grown as needed) with open/read/close: no fstat,
// no *os.File, no allocation once buf is large enough.
func readProcFile(path string, buf []byte) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

func procPath(pid int, file string) string {
	if file == "" {
		return "/proc/" + strconv.Itoa(pid)
	}
	return "/proc/" + strconv.Itoa(pid) + "/" + file
}

// isGone tells a process that exited (ENOENT on open; ESRCH on reading a file of a process that exited after
// the open, or the memory of a zombie) from other errors.
func isGone(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}

// gone turns "the process exited" into an error wrapping os.ErrNotExist and annotates the rest.
func gone(pid int, err error) error {
	if isGone(err) {
		return fmt.Errorf("process %d is gone: %w", pid, os.ErrNotExist)
	}
	return fmt.Errorf("process %d: %w", pid, err)
}

// atoi parses a non-negative or negative decimal integer without allocating.
func atoi(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}
