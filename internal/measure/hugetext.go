package measure

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// HugeText says whether a process's machine code sits on huge pages: after opcache.huge_code_pages remaps
// PHP's text, the r-x mapping at the binary's text address is anonymous and backed by transparent huge pages
// (AnonHugePages) or reserved ones (Private_Hugetlb).
type HugeText struct {
	OnHugePages bool  `json:"on_huge_pages"`
	AnonHuge    int64 `json:"anon_huge_bytes"`
	Hugetlb     int64 `json:"hugetlb_bytes"`
}

// ReadHugeText reads /proc/PID/smaps.
func ReadHugeText(pid int) (HugeText, error) {
	var h HugeText
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return h, fmt.Errorf("read smaps: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	inAnonText := false
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) >= 5 && strings.Contains(fields[0], "-") && len(fields[1]) == 4 {
			// A mapping's header: address perms offset dev inode [path].
			inAnonText = fields[1] == "r-xp" && len(fields) == 5
			continue
		}
		if !inAnonText || len(fields) < 2 {
			continue
		}
		switch fields[0] {
		case "AnonHugePages:", "Private_Hugetlb:":
			kb, _ := strconv.ParseInt(fields[1], 10, 64)
			if fields[0] == "AnonHugePages:" {
				h.AnonHuge += kb << 10
			} else {
				h.Hugetlb += kb << 10
			}
		}
	}
	h.OnHugePages = h.AnonHuge > 0 || h.Hugetlb > 0
	return h, sc.Err()
}
