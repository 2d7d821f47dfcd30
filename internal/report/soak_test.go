package report

import (
	"bytes"
	"html"
	"strconv"
	"strings"
	"testing"
)

// testdata/tune-result-soak.json is a real run whose soak found a leak: phptune tune APP --url /=49 --url
// /leak.php=1 --ini ffi.enable=1 --only max_requests --budget 30s --soak 10s, where leak.php leaks 1 MiB a request
// through FFI (internal/tune's TestSoakFindsARealLeak has the page), 2026-11-25, on a 2-CPU machine.

// TestTuneSoakReadsRight: the soak's section names the page that leaks with its growth, the max_requests row
// reads "from the soak" with the soak's value and its figures under it, within the terminal's width; report.html
// draws every read of every worker and says what leaks.
func TestTuneSoakReadsRight(t *testing.T) {
	r := recordedTuneFile(t, "testdata/tune-result-soak.json")
	sk := r.Soak
	if sk == nil || !sk.Growth.Shown || sk.MaxRequests == 0 {
		t.Fatalf("the recorded soak %+v: want growth shown and a max_requests", sk)
	}
	checkRowsReadRight(t, "soak", r)
	var b bytes.Buffer
	Tune(&b, r)
	out := b.String()
	flat := strings.Join(strings.Fields(out), " ") // wrapped lines, read as a person does
	for _, want := range []string{"Memory over hours: A static pool of", "/leak.php grows a worker by 1.0 MiB a request",
		"pm.max_requests " + strconv.Itoa(sk.MaxRequests) + " keeps a worker within", "A worker grows " + sk.Growth.String()} {
		if !strings.Contains(flat, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	var row *renderedRow
	for _, rw := range readRows(t, out) {
		if rw.name == "max_requests" {
			row = &rw
		}
	}
	if row == nil || row.kept != strconv.Itoa(sk.MaxRequests) && !strings.HasSuffix(row.kept, "-> "+strconv.Itoa(sk.MaxRequests)) ||
		!strings.Contains(out, "from the soak") {
		t.Errorf("the max_requests row %+v: want %d from the soak:\n%s", row, sk.MaxRequests, out)
	}
	var page bytes.Buffer
	if err := TuneHTML(&page, r, nil); err != nil {
		t.Fatal(err)
	}
	text := html.UnescapeString(page.String())
	if got, want := declaredMarks(text), expectedMarks(r); want["soak"] == 0 || got["soak"] != want["soak"] {
		t.Errorf("the soak chart's marks %d, want a worker's every read: %d", got["soak"], want["soak"])
	}
	if !strings.Contains(text, "Sent alone to a worker of its own, /leak.php grows a worker by 1.0 MiB a request") {
		t.Error("report.html does not name the page that leaks")
	}
}

// TestSoakNoGrowthNoProjection: a growth whose interval holds zero is not projected over a day, even from a result
// that carries a day's figures (the "would hold at most 196 GiB" from [-39, +14] KiB a request).
func TestSoakNoGrowthNoProjection(t *testing.T) {
	r := recordedTuneFile(t, "testdata/tune-result-soak.json")
	if len(r.Soak.Day) == 0 {
		t.Fatal("the recorded soak has no day to leave out")
	}
	r.Soak.Growth.Shown, r.Soak.Growth.Lo = false, -r.Soak.Growth.Hi
	var b bytes.Buffer
	Tune(&b, r)
	if out := b.String(); strings.Contains(out, "after a day") || strings.Contains(out, "would hold") {
		t.Errorf("a growth not shown projected over a day:\n%s", out)
	}
	r.Soak.Growth.Shown = true
	b.Reset()
	Tune(&b, r)
	if !strings.Contains(strings.Join(strings.Fields(b.String()), " "), "after a day") {
		t.Errorf("a growth shown, and no day's projection:\n%s", b.String())
	}
}
