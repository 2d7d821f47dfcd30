package phpbuild

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/phptune/phptune/internal/measure"
)

// HugeCodePagesINI is the setting verified on top of a variant: opcache copies PHP's text to huge pages at
// start-up (reserved pages, or THP through madvise).
const HugeCodePagesINI = "opcache.huge_code_pages=1"

// HugeSuffix names the arm of a variant that runs with HugeCodePagesINI.
const HugeSuffix = "+huge_code_pages"

// smapsScript prints the PHP process's own memory map, huge page counts included.
const smapsScript = "<?php echo file_get_contents('/proc/self/smaps');\n"

// ProbeHugeCodePages runs a variant's php-cgi with opcache.huge_code_pages=1 on a script that prints its own
// smaps, and says where the text ended up. The setting is credited only when the text was really remapped
// onto huge pages: opcache falls back to 4 KiB pages silently when the system offers none.
func ProbeHugeCodePages(ctx context.Context, cgi, opcache string) (*measure.HugePages, error) {
	dir, err := os.MkdirTemp("", "phptune-hugepages-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "smaps.php")
	if err := os.WriteFile(script, []byte(smapsScript), 0o644); err != nil {
		return nil, err
	}
	r := CGIRun{CGI: cgi, INI: append(INI(opcache, false), HugeCodePagesINI), Script: script, Repeats: 1, CPU: -1}
	res, err := r.Run(ctx)
	if err != nil {
		return nil, fmt.Errorf("huge_code_pages probe: %w", err)
	}
	exe, err := filepath.EvalSymlinks(cgi)
	if err != nil {
		return nil, err
	}
	return measure.HugePagesFromSmaps(res.Head, exe)
}

// HugeCredited says whether a probe found the text on huge pages, and if not, why in a few words.
func HugeCredited(h *measure.HugePages) (bool, string) {
	switch {
	case !h.TextRemapped:
		return false, "opcache left the text in place (no huge pages to be had: THP never and none reserved?)"
	case h.TextHugeBytes == 0:
		return false, "opcache copied the text but the copy is on 4 KiB pages (THP gave none)"
	}
	return true, fmt.Sprintf("%d of %d KiB of text on huge pages", h.TextHugeBytes>>10, h.TextBytes>>10)
}
