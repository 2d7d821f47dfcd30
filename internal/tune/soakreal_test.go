package tune

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/stack"
)

// leakPHP leaks 1 MiB a request where PHP cannot free it (PHP frees a request's own memory at its end): C's
// malloc through FFI, every page written so that it is the worker's own.
const leakPHP = `<?php
$ffi = FFI::cdef("void *malloc(size_t); void *memset(void *, int, size_t);");
$ffi->memset($ffi->malloc(1 << 20), 1, 1 << 20);
echo "leaked";
`

// realSoakTuner is a tuner on real php-fpm and nginx serving app's urls, its pool sized at two static workers of
// 64 MiB each, soaked for d.
func realSoakTuner(t *testing.T, app string, urls []load.MixItem, d time.Duration) *tuner {
	t.Helper()
	base := knob.Debian()
	base.SetSetting("ffi.enable", "1")
	tu, err := newTuner(Options{Stack: stack.Config{App: app}, Base: base, Knobs: knob.All("", nil), Budget: time.Minute,
		Soak: d, Timeout: 10 * time.Second, URLs: urls})
	if err != nil {
		t.Fatal(err)
	}
	tu.serve()
	t.Cleanup(tu.stacks.StopAll)
	tu.best.MaxChildren, tu.conc = 2, 2
	tu.pool = &PoolSize{Knee: 2, SharedBytes: 20 << 20, PerWorkerBytes: 64 << 20, Initial: 2, Chosen: 2}
	return tu
}

// TestSoakFindsARealLeak (real php-fpm and nginx): on a mix where one request in ten leaks 1 MiB through FFI,
// the soak shows the workers grow by about a tenth of 1 MiB a request, names the page at 1 MiB a request sent
// alone (the page that does not leak is not named), and sets pm.max_requests, in the row marked as the soak's
// and in the recommendation, to keep a worker within the 64 MiB the pool was sized with. An app that does not
// leak shows no growth and keeps max_requests 0.
//
// Margins, simulated with the allocator's noise (measure's TestGrowthErrorRates): a tenth of the mix on two
// workers read 16 times 30 requests apart is shown in every one of 3000 soaks. Here the mix's 8 s of steps of
// 200 ms are read 20 times or more unless a read takes 200 ms, at 300 req/s or more (this page serves over a
// thousand); the soak stops early once the growth is measured to within a tenth. A page alone grows by exactly
// 1 MiB a request.
func TestSoakFindsARealLeak(t *testing.T) {
	app := t.TempDir()
	os.WriteFile(filepath.Join(app, "index.php"), []byte(`<?php echo str_repeat("hello ", 50);`), 0o644)
	os.WriteFile(filepath.Join(app, "leak.php"), []byte(leakPHP), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	tu := realSoakTuner(t, app, []load.MixItem{{URI: "/", Weight: 9}, {URI: "/leak.php", Weight: 1}}, 12*time.Second)
	began := time.Now()
	if err := tu.soak(ctx); err != nil {
		t.Fatal(err)
	}
	sk := tu.log.soak
	t.Logf("leak: %s, %d requests in %.1f s of load, %s in all; %s; warnings %q", sk.Growth, sk.Requests, sk.Seconds,
		time.Since(began).Round(time.Millisecond), soakNote(sk), tu.log.warnings)
	if g := sk.Growth; !g.Shown || g.PerRequest < 50<<10 || g.PerRequest > 200<<10 {
		t.Errorf("the mix's growth %+v: want it shown, about 100 KiB a request", g)
	}
	alone := map[string]URLGrowth{}
	for _, u := range sk.URLs {
		alone[u.Path] = u
	}
	if g := alone["/leak.php"].Growth; !g.Shown || g.PerRequest < 0.9*(1<<20) || g.PerRequest > 1.1*(1<<20) {
		t.Errorf("/leak.php alone: %+v, want shown at 1 MiB a request", g)
	}
	if u, ok := alone["/"]; !ok || u.Growth.Shown {
		t.Errorf("/ alone: %+v (sent %v), want sent and no growth shown", u.Growth, ok)
	}
	row, ok := tu.decided["max_requests"]
	n := tu.best.MaxRequests
	if !ok || !strings.HasPrefix(row.Note, SoakNote) || row.Value != knob.MaxRequests().Get(tu.best) ||
		!strings.Contains(row.Note, "/leak.php grows a worker by 1.0 MiB a request") {
		t.Errorf("the max_requests row %+v: want it from the soak, naming the page", row)
	}
	if ps := tu.pool; n == 0 || n != sk.MaxRequests || sk.StartBytes+int64(float64(n)*sk.Growth.Hi) > max(ps.PerWorkerBytes, ps.GrownPerWorkerBytes) {
		t.Errorf("max_requests %d (soak %d) from %d bytes at %.0f a request: beyond the %d bytes a worker is counted at",
			n, sk.MaxRequests, sk.StartBytes, sk.Growth.Hi, max(ps.PerWorkerBytes, ps.GrownPerWorkerBytes))
	}

	tu = realSoakTuner(t, app, []load.MixItem{{URI: "/", Weight: 1}}, 3*time.Second)
	if err := tu.soak(ctx); err != nil {
		t.Fatal(err)
	}
	sk = tu.log.soak
	t.Logf("no leak: %s", soakNote(sk))
	if sk.Growth.Shown || !sk.Growth.Known() || len(sk.URLs) > 0 || tu.best.MaxRequests != 0 ||
		!strings.Contains(tu.decided["max_requests"].Note, "no growth shown") {
		t.Errorf("no leak: soak %+v, max_requests %d, row %+v", sk.Growth, tu.best.MaxRequests, tu.decided["max_requests"])
	}
}
