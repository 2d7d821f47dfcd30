package report

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/phptune/phptune/internal/compare"
	"github.com/phptune/phptune/internal/tune"
)

// chromiumPath is Debian's chromium (package chromium), or $PHPTUNE_CHROMIUM.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PHPTUNE_CHROMIUM"); p != "" {
		return p
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		msg := "chromium not found: install Debian's chromium package (scripts/install-deps.sh does)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

// browser starts a private headless chromium: no sandbox (we may be root), and no background connections,
// which the closed network would refuse and which would show as errors.
func browser(t *testing.T) context.Context {
	t.Helper()
	bin := chromiumPath(t)
	// A fresh profile; removed after chromium's last process has gone (it writes there while exiting).
	profile, err := os.MkdirTemp("", "phptune-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1100, 900),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() {
		cancelT()
		cancelB()
		cancelA()
		for i := 0; i < 20 && os.RemoveAll(profile) != nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	})
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// chartSeen is what the browser reports of one chart.
type chartSeen struct {
	ID        string  `json:"id"`
	Declared  string  `json:"declared"`
	W         float64 `json:"w"`
	H         float64 `json:"h"`
	Marks     int     `json:"marks"`
	Visible   int     `json:"visible"` // marks with a non-zero rendered size inside the SVG's box
	Tooltips  int     `json:"tooltips"`
	TextCount int     `json:"texts"`
	// Clipped lists the labels that reach outside the SVG's box, where the browser cuts them off.
	Clipped []string `json:"clipped"`
}

const probeJS = `Array.from(document.querySelectorAll("svg.chart")).map(function (s) {
  var box = s.getBoundingClientRect();
  var marks = Array.from(s.querySelectorAll(".mark"));
  var visible = marks.filter(function (m) {
    var r = m.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && r.left >= box.left - 1 && r.right <= box.right + 1 && r.top >= box.top - 1 && r.bottom <= box.bottom + 1;
  }).length;
  var clipped = Array.from(s.querySelectorAll("text")).filter(function (x) {
    var r = x.getBoundingClientRect();
    return r.width > 0 && (r.left < box.left - 1 || r.right > box.right + 1);
  }).map(function (x) { return x.textContent; });
  return {id: s.getAttribute("data-chart"), declared: s.getAttribute("data-marks"), w: box.width, h: box.height,
    marks: marks.length, visible: visible, tooltips: s.querySelectorAll(".mark > title").length, texts: s.querySelectorAll("text").length,
    clipped: clipped};
})`

// openPage loads an HTML file and returns its charts as rendered, failing on any console error, uncaught
// exception or failed load the page causes.
func openPage(t *testing.T, ctx context.Context, path string) (seen map[string]chartSeen, title, copyButton string) {
	t.Helper()
	var mu sync.Mutex
	var problems []string
	tctx, cancel := chromedp.NewContext(ctx)
	defer cancel()
	chromedp.ListenTarget(tctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+e.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError || e.Type == runtime.APITypeWarning || e.Type == runtime.APITypeAssert {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				problems = append(problems, fmt.Sprintf("console.%s: %s", e.Type, strings.Join(args, " ")))
			}
		case *log.EventEntryAdded:
			if e.Entry.Level == log.LevelError || e.Entry.Level == log.LevelWarning {
				problems = append(problems, fmt.Sprintf("log %s (%s): %s %s", e.Entry.Level, e.Entry.Source, e.Entry.Text, e.Entry.URL))
			}
		}
	})
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	var charts []chartSeen
	if err := chromedp.Run(tctx,
		log.Enable(), runtime.Enable(),
		chromedp.Navigate("file://"+abs),
		chromedp.WaitReady("body"),
		chromedp.Title(&title),
		chromedp.Evaluate(probeJS, &charts),
	); err != nil {
		t.Fatalf("chromium on %s: %v", path, err)
	}
	// The copy button's script runs without error and answers (the clipboard, or the selection where the
	// clipboard is refused).
	var clicked bool
	if err := chromedp.Run(tctx, chromedp.Evaluate(`(function () { var b = document.querySelector("button.copy"); if (b) b.click(); return !!b; })()`, &clicked)); err != nil {
		t.Fatalf("click copy: %v", err)
	}
	if clicked {
		time.Sleep(300 * time.Millisecond)
		if err := chromedp.Run(tctx, chromedp.Text("button.copy", &copyButton, chromedp.ByQuery)); err != nil {
			t.Fatalf("read copy button: %v", err)
		}
	}
	if dir := os.Getenv("PHPTUNE_SCREENSHOTS"); dir != "" {
		var png []byte
		if err := chromedp.Run(tctx, chromedp.FullScreenshot(&png, 100)); err == nil {
			os.WriteFile(filepath.Join(dir, strings.TrimSuffix(filepath.Base(path), ".html")+".png"), png, 0o644)
		}
		var ids []string
		for _, c := range charts {
			ids = append(ids, "chart-"+c.ID)
		}
		var sections []string
		if err := chromedp.Run(tctx, chromedp.Evaluate(`Array.from(document.querySelectorAll("section[id]")).map(s => s.id)`, &sections)); err == nil {
			ids = append(ids, sections...)
		}
		for _, id := range ids {
			if err := chromedp.Run(tctx, chromedp.Screenshot("#"+id, &png, chromedp.ByQuery)); err == nil {
				os.WriteFile(filepath.Join(dir, strings.TrimSuffix(filepath.Base(path), ".html")+"-"+id+".png"), png, 0o644)
			}
		}
	}
	// Late events (a failing resource) arrive asynchronously: give them a moment.
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("%s: the page logged problems:\n  %s", path, strings.Join(problems, "\n  "))
	}
	seen = map[string]chartSeen{}
	for _, c := range charts {
		seen[c.ID] = c
	}
	return seen, title, copyButton
}

// wantCharts counts the data marks each chart must show, from the result itself (not from the renderer).
func checkCharts(t *testing.T, name string, seen map[string]chartSeen, want map[string]int) {
	t.Helper()
	for id, n := range want {
		c, ok := seen[id]
		if !ok {
			t.Errorf("%s: chart %q missing (charts: %v)", name, id, keys(seen))
			continue
		}
		if c.W < 300 || c.H < 100 {
			t.Errorf("%s: chart %q renders at %.0fx%.0f", name, id, c.W, c.H)
		}
		if c.Marks != n || c.Visible != n || c.Tooltips != n || c.Declared != fmt.Sprint(n) {
			t.Errorf("%s: chart %q: %d marks (%d visible, %d with tooltips, %s declared), want %d", name, id, c.Marks, c.Visible, c.Tooltips, c.Declared, n)
		}
		if c.TextCount < 3 {
			t.Errorf("%s: chart %q has %d labels", name, id, c.TextCount)
		}
		if len(c.Clipped) > 0 {
			t.Errorf("%s: chart %q cuts off the labels %q", name, id, c.Clipped)
		}
	}
	for id := range seen {
		if _, ok := want[id]; !ok {
			t.Errorf("%s: unexpected chart %q", name, id)
		}
	}
}

func keys[V any](m map[string]V) []string {
	var k []string
	for id := range m {
		k = append(k, id)
	}
	return k
}

func TestReportRendersInChromium(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	r := recordedTune(t)

	full := filepath.Join(dir, "tune-full.html")
	writeTuneHTML(t, full, r, recordedFiles(t))
	seen, title, copied := openPage(t, ctx, full)
	if !strings.Contains(title, r.App) {
		t.Errorf("title %q lacks the app %q", title, r.App)
	}
	t.Logf("the copy button after a click: %q", copied)
	if copied != "copied" && copied != "selected: press Ctrl+C" {
		t.Errorf("the copy button says %q after a click", copied)
	}
	checkCharts(t, "full", seen, expectedMarks(r))

	partial := partialOf(r)
	part := filepath.Join(dir, "tune-partial.html")
	writeTuneHTML(t, part, partial, nil)
	seen, _, _ = openPage(t, ctx, part)
	checkCharts(t, "partial", seen, expectedMarks(partial))

	b := recordedBench(t)
	bench := filepath.Join(dir, "bench.html")
	f, err := os.Create(bench)
	if err != nil {
		t.Fatal(err)
	}
	if err := BenchHTML(f, b); err != nil {
		t.Fatal(err)
	}
	f.Close()
	seen, _, _ = openPage(t, ctx, bench)
	checkCharts(t, "bench", seen, expectedBenchMarks(b))

	var r2 tune.Result
	data, err := os.ReadFile("testdata/tune-result-2.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &r2); err != nil {
		t.Fatal(err)
	}
	tr, err := compare.Tunes([]*tune.Result{r, &r2}, []string{"A", "B"}, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	cmp := filepath.Join(dir, "compare.html")
	f, err = os.Create(cmp)
	if err != nil {
		t.Fatal(err)
	}
	if err := CompareTunesHTML(f, tr); err != nil {
		t.Fatal(err)
	}
	f.Close()
	seen, _, _ = openPage(t, ctx, cmp)
	checkCharts(t, "compare", seen, map[string]int{"compare": statsRows(tr.Throughput)})
}
