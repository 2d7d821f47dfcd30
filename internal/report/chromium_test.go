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
		chromedp.WindowSize(1280, 900), // a laptop's width: the page must fit it
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

// layoutSeen is what the browser reports of a page's layout: what a reader would see broken.
type layoutSeen struct {
	// Overflow lists elements wider than the card, figure, table or section that holds them.
	Overflow []string `json:"overflow"`
	// PageWider says the page scrolls sideways at this width.
	PageWider bool `json:"page_wider"`
	// Duplicates lists legend entries, and chart rows, named twice in one chart.
	Duplicates []string `json:"duplicates"`
	// Placeholder is page text with an unexpanded ${...}.
	Placeholder string `json:"placeholder"`
	// Headline lists headline figures the configurations table does not show in the row and column they name.
	Headline []string `json:"headline"`
	Figures  int      `json:"figures"`
}

const layoutJS = `(function () {
  var out = {overflow: [], page_wider: document.documentElement.scrollWidth > document.documentElement.clientWidth + 1,
    duplicates: [], placeholder: "", headline: [], figures: 0};
  var hidden = function (e) { return e.closest("details:not([open])") || e.closest("pre") || e.closest("svg"); };
  var name = function (e) { return e.tagName.toLowerCase() + (e.className && typeof e.className === "string" ? "." + e.className.split(" ").join(".") : "") +
    " \"" + (e.textContent || "").trim().slice(0, 40) + "\""; };
  document.querySelectorAll("main *").forEach(function (e) {
    if (hidden(e)) return;
    var r = e.getBoundingClientRect();
    if (r.width === 0) return;
    var box = e.parentElement && e.parentElement.closest(".card, figure, .file, table, section, header, dl, main");
    if (!box) return;
    var b = box.getBoundingClientRect();
    if (r.left < b.left - 1 || r.right > b.right + 1) out.overflow.push(name(e) + " in " + name(box).slice(0, 40));
  });
  document.querySelectorAll("figure").forEach(function (f) {
    var seen = {};
    f.querySelectorAll(".legend span, text.row-label").forEach(function (x) {
      var k = x.tagName + ":" + x.textContent.trim();
      if (seen[k]) out.duplicates.push((f.id || "figure") + ": " + x.textContent.trim());
      seen[k] = true;
    });
  });
  var m = document.body.innerText.match(/\$\{[^}]*\}?/) || document.documentElement.outerHTML.match(/\$\{[^}]*\}?/);
  if (m) out.placeholder = m[0];
  document.querySelectorAll(".hfig").forEach(function (f) {
    out.figures++;
    var row = Array.from(document.querySelectorAll("#variants tr[data-row]")).find(function (r) { return r.getAttribute("data-row") === f.getAttribute("data-row"); });
    var cell = row && row.querySelector('td[data-metric="' + f.getAttribute("data-metric") + '"]');
    if (!cell || cell.textContent.trim() !== f.textContent.trim()) {
      out.headline.push(f.getAttribute("data-row") + " " + f.getAttribute("data-metric") + " " + f.textContent.trim() + ": the table has " + (cell ? cell.textContent.trim() : "no such cell"));
    }
  });
  return out;
})()`

// checkLayout fails on what a reader would see broken at this width.
func checkLayout(t *testing.T, name string, l layoutSeen, headline bool) {
	t.Helper()
	if len(l.Overflow) > 0 {
		t.Errorf("%s: elements wider than their card: %q", name, l.Overflow)
	}
	if l.PageWider {
		t.Errorf("%s: the page scrolls sideways", name)
	}
	if len(l.Duplicates) > 0 {
		t.Errorf("%s: named twice in a chart: %q", name, l.Duplicates)
	}
	if l.Placeholder != "" {
		t.Errorf("%s: an unexpanded placeholder: %q", name, l.Placeholder)
	}
	if len(l.Headline) > 0 {
		t.Errorf("%s: headline figures not in the table: %q", name, l.Headline)
	}
	if headline && l.Figures == 0 {
		t.Errorf("%s: no headline figure found", name)
	}
}

// openPage loads an HTML file and returns its charts as rendered, failing on any console error, uncaught
// exception or failed load the page causes.
func openPage(t *testing.T, ctx context.Context, path string) (seen map[string]chartSeen, title, copyButton string, layout layoutSeen) {
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
		chromedp.Evaluate(layoutJS, &layout),
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
	return seen, title, copyButton, layout
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
	probeSeesBreakage(t, ctx)
	dir := t.TempDir()
	r := recordedTune(t)

	full := filepath.Join(dir, "tune-full.html")
	writeTuneHTML(t, full, r, recordedFiles(t))
	seen, title, copied, layout := openPage(t, ctx, full)
	if !strings.Contains(title, r.App) {
		t.Errorf("title %q lacks the app %q", title, r.App)
	}
	t.Logf("the copy button after a click: %q", copied)
	if copied != "copied" && copied != "selected: press Ctrl+C" {
		t.Errorf("the copy button says %q after a click", copied)
	}
	checkCharts(t, "full", seen, expectedMarks(r))
	checkLayout(t, "full", layout, true)

	// A run on today's code: CPU trials beside throughput trials at other loads, a preload with its docroot.
	r3 := recordedTune3(t)
	now := filepath.Join(dir, "tune-3.html")
	writeTuneHTML(t, now, r3, recordedFiles(t))
	seen, _, _, layout = openPage(t, ctx, now)
	checkCharts(t, "recorded 3", seen, expectedMarks(r3))
	checkLayout(t, "recorded 3", layout, true)

	partial := partialOf(r)
	part := filepath.Join(dir, "tune-partial.html")
	writeTuneHTML(t, part, partial, nil)
	seen, _, _, layout = openPage(t, ctx, part)
	checkCharts(t, "partial", seen, expectedMarks(partial))
	checkLayout(t, "partial", layout, false)

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
	seen, _, _, layout = openPage(t, ctx, bench)
	checkCharts(t, "bench", seen, expectedBenchMarks(b))
	checkLayout(t, "bench", layout, false)

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
	seen, _, _, layout = openPage(t, ctx, cmp)
	checkCharts(t, "compare", seen, map[string]int{"compare": statsRows(tr.Throughput)})
	checkLayout(t, "compare", layout, false)
}

// probeSeesBreakage checks that the layout probe sees each breakage it is there for, on a page made with all
// of them.
func probeSeesBreakage(t *testing.T, ctx context.Context) {
	page := `<!DOCTYPE html><html><head><style>main{width:600px} section{width:500px} figure{width:400px;margin:0}</style></head><body><main>
<header><div class="card"><b class="hfig" data-row="recommendation @ 8" data-metric="req/s">640</b></div></header>
<section id="settings"><table style="width:700px"><tr><td>wide</td></tr></table></section>
<figure id="chart-memory"><div class="legend"><span><i></i>saturation sweep</span><span><i></i>saturation sweep</span></div></figure>
<section id="variants"><table><tr data-row="recommendation @ 8"><td data-metric="req/s">620</td></tr></table></section>
<p>opcache.preload=${DOCROOT}/preload.php</p></main></body></html>`
	path := filepath.Join(t.TempDir(), "broken.html")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, _, l := openPage(t, ctx, path)
	if len(l.Overflow) == 0 || len(l.Duplicates) != 1 || l.Placeholder != "${DOCROOT}" || len(l.Headline) != 1 || l.Figures != 1 {
		t.Errorf("the probe missed a breakage: %+v", l)
	}
}
