package measure

// Huge pages of a php-fpm worker (DESIGN 4): with opcache.huge_code_pages the master copies PHP's text to huge
// pages at start-up (reserved pages first, then THP through madvise) and the workers inherit the mapping, which
// is then anonymous r-xp at the binary's text address with AnonHugePages or Private_Hugetlb above zero. opcache's
// shared memory uses reserved huge pages (MAP_HUGETLB) when vm.nr_hugepages leaves some free. phptune reads
// /proc and says which system step would help; it never writes a sysctl.

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// HugePages is where a worker's text and opcache's shared memory live, and what the system offers.
type HugePages struct {
	PID    int    `json:"pid"`
	Binary string `json:"binary"`
	// TextBytes is the size of the r-xp mappings at the binary's addresses; TextHugeBytes the part of them on
	// huge pages. TextRemapped: part of the text is anonymous (opcache.huge_code_pages copied it).
	TextBytes     int64 `json:"text_bytes"`
	TextHugeBytes int64 `json:"text_huge_bytes"`
	TextRemapped  bool  `json:"text_remapped"`
	// The largest shared anonymous mapping: opcache's segment (opcache.memory_consumption, and the JIT buffer).
	OpcacheBytes     int64 `json:"opcache_segment_bytes"`
	OpcacheHugeBytes int64 `json:"opcache_segment_huge_bytes"`
	// The system: THP mode ("always", "madvise", "never"), reserved huge pages, their size.
	THP            string `json:"thp"`
	HugePagesTotal int64  `json:"hugepages_total"`
	HugePagesFree  int64  `json:"hugepages_free"`
	HugePageSize   int64  `json:"hugepage_size"`
	// Advice says what would put the text and the segment on huge pages, when they are not.
	Advice []string `json:"advice,omitempty"`
}

type mapping struct {
	start, end                                                    uint64
	perms, path                                                   string
	size, anonHuge, privHugetlb, sharedHugetlb, shmemPmd, filePmd int64
}

func (m mapping) huge() int64 {
	return m.anonHuge + m.privHugetlb + m.sharedHugetlb + m.shmemPmd + m.filePmd
}

// ReadHugePages reads a worker's smaps and the system's huge page settings. hugeCodePages is the value of
// opcache.huge_code_pages the pool runs with ("" when unknown), used for the advice.
func ReadHugePages(pid int, hugeCodePages string) (*HugePages, error) {
	exe, err := os.Readlink(procPath(pid, "exe"))
	if err != nil {
		return nil, gone(pid, err)
	}
	data, err := os.ReadFile(procPath(pid, "smaps"))
	if err != nil {
		return nil, gone(pid, err)
	}
	maps, err := parseSmaps(data)
	if err != nil {
		return nil, fmt.Errorf("process %d: %w", pid, err)
	}
	h := &HugePages{PID: pid, Binary: strings.TrimSuffix(exe, " (deleted)")}
	h.fromMappings(maps)
	if b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled"); err == nil {
		h.THP = bracketed(string(b))
	}
	if mem, err := readMeminfo(); err == nil {
		h.HugePagesTotal, h.HugePagesFree, h.HugePageSize = mem["HugePages_Total"], mem["HugePages_Free"], mem["Hugepagesize"]
	}
	h.Advice = h.advise(hugeCodePages)
	return h, nil
}

// HugePagesFromSmaps reads where a process's text lies from its smaps (as a process can print its own), for a
// process running binary: TextBytes, TextHugeBytes and TextRemapped; no system facts, no advice.
func HugePagesFromSmaps(data []byte, binary string) (*HugePages, error) {
	maps, err := parseSmaps(data)
	if err != nil {
		return nil, err
	}
	h := &HugePages{Binary: binary}
	h.fromMappings(maps)
	if h.TextBytes == 0 {
		return nil, fmt.Errorf("no executable mapping of %s in the smaps given", binary)
	}
	return h, nil
}

func (h *HugePages) fromMappings(maps []mapping) {
	// The binary's address range: from its first to its last file mapping. opcache's copy of the text replaces
	// the middle of it with an anonymous mapping at the same addresses.
	var lo, hi uint64
	for _, m := range maps {
		if m.path == h.Binary {
			if lo == 0 || m.start < lo {
				lo = m.start
			}
			hi = max(hi, m.end)
		}
	}
	for _, m := range maps {
		if m.perms == "r-xp" && m.start >= lo && m.end <= hi && hi > 0 {
			h.TextBytes += m.size
			h.TextHugeBytes += m.huge()
			if m.path != h.Binary {
				h.TextRemapped = true
			}
		}
		if strings.HasSuffix(m.perms, "s") && strings.HasPrefix(m.perms, "rw") && sharedAnon(m.path) && m.size > h.OpcacheBytes {
			h.OpcacheBytes, h.OpcacheHugeBytes = m.size, m.huge()
		}
	}
}

// sharedAnon tells the names the kernel gives shared anonymous memory: mmap(MAP_SHARED|MAP_ANONYMOUS) shows as
// /dev/zero (deleted), MAP_HUGETLB as /anon_hugepage (deleted), System V segments as /SYSV...
func sharedAnon(path string) bool {
	return path == "" || strings.HasPrefix(path, "/dev/zero") || strings.HasPrefix(path, "/anon_hugepage") ||
		strings.HasPrefix(path, "/SYSV") || path == "[anon_shmem]"
}

func (h *HugePages) advise(hugeCodePages string) []string {
	var a []string
	page := h.HugePageSize
	if page <= 0 {
		page = 2 << 20
	}
	need := (h.TextBytes + h.OpcacheBytes + page - 1) / page
	if h.TextBytes > 0 && h.TextHugeBytes == 0 {
		switch {
		case hugeCodePages != "1" && hugeCodePages != "On" && hugeCodePages != "on":
			a = append(a, "PHP's text is on 4 KiB pages: opcache.huge_code_pages=1 (for the master: php.ini or php-fpm -d) copies it to huge pages at start-up")
		case h.HugePagesFree == 0 && h.THP == "never":
			a = append(a, fmt.Sprintf("opcache.huge_code_pages is on but the system offers no huge pages: reserve some (vm.nr_hugepages=%d) or set THP to madvise (/sys/kernel/mm/transparent_hugepage/enabled)", need+2))
		default:
			a = append(a, "opcache.huge_code_pages is on but the text is not on huge pages: opcache.log_verbosity_level=4 logs why at start-up")
		}
	}
	if h.OpcacheBytes > 0 && h.OpcacheHugeBytes == 0 {
		if h.HugePagesFree*page < h.OpcacheBytes {
			a = append(a, fmt.Sprintf("opcache's %d MiB segment is on 4 KiB pages: opcache takes reserved huge pages only (MAP_HUGETLB); vm.nr_hugepages=%d (now %d) would let it",
				h.OpcacheBytes>>20, h.HugePagesTotal+(h.OpcacheBytes+page-1)/page+2, h.HugePagesTotal))
		} else {
			a = append(a, "opcache's segment is on 4 KiB pages though reserved huge pages are free (opcache asks for them only when its memory is a multiple of 2 MiB): opcache.log_verbosity_level=4 logs why at start-up")
		}
	}
	return a
}

// parseSmaps reads /proc/PID/smaps: a header line per mapping ("start-end perms offset dev inode [path]") and
// "Key: N kB" lines.
func parseSmaps(data []byte) ([]mapping, error) {
	var maps []mapping
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if strings.HasSuffix(f[0], ":") {
			if len(maps) == 0 || len(f) < 2 {
				continue
			}
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				continue // VmFlags and the like
			}
			n *= 1024
			m := &maps[len(maps)-1]
			switch f[0] {
			case "Size:":
				m.size = n
			case "AnonHugePages:":
				m.anonHuge = n
			case "Private_Hugetlb:":
				m.privHugetlb = n
			case "Shared_Hugetlb:":
				m.sharedHugetlb = n
			case "ShmemPmdMapped:":
				m.shmemPmd = n
			case "FilePmdMapped:":
				m.filePmd = n
			}
			continue
		}
		lohi := strings.SplitN(f[0], "-", 2)
		if len(lohi) != 2 || len(f) < 5 {
			return nil, fmt.Errorf("malformed smaps header %q", line)
		}
		lo, err1 := strconv.ParseUint(lohi[0], 16, 64)
		hi, err2 := strconv.ParseUint(lohi[1], 16, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("malformed smaps header %q", line)
		}
		m := mapping{start: lo, end: hi, perms: f[1]}
		if len(f) > 5 {
			m.path = strings.Join(f[5:], " ")
		}
		maps = append(maps, m)
	}
	return maps, sc.Err()
}
