package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/tune"
)

// TestMemoryFiguresThreeWays: a run in a limited cgroup states what it met of the limit (the cgroup, its limit,
// the most it held, the OOM killer's kills) with the same figures in the summary, --verbose, report.html and
// result.json's answer.
func TestMemoryFiguresThreeWays(t *testing.T) {
	for _, use := range []tune.MemoryUse{
		{Cgroup: "/phptune-test", Limit: 512 << 20, PeakBytes: 301<<20 + 12345},
		{Cgroup: "/phptune-tight", Limit: 256 << 20, PeakBytes: 255 << 20, OOMKills: 3},
	} {
		r := recordedTuneFile(t, "testdata/tune-result-3.json")
		r.Memory = &use
		var js, sum, full, page bytes.Buffer
		if err := WriteJSON(&js, RecordOf(r)); err != nil {
			t.Fatal(err)
		}
		var rec struct {
			Answer struct {
				Memory *struct {
					Cgroup   string `json:"cgroup"`
					LimitMiB int64  `json:"limit_mib"`
					PeakMiB  int64  `json:"peak_mib"`
					OOMKills int64  `json:"oom_kills"`
				} `json:"memory"`
			} `json:"answer"`
		}
		if err := json.Unmarshal(js.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		m := rec.Answer.Memory
		if m == nil || m.Cgroup != use.Cgroup || m.LimitMiB != use.Limit>>20 || m.PeakMiB != use.PeakBytes>>20 || m.OOMKills != use.OOMKills {
			t.Fatalf("result.json's answer.memory %+v, want the figures of %+v", m, use)
		}
		TuneSummary(&sum, r)
		Tune(&full, r)
		if err := TuneHTML(&page, r, nil); err != nil {
			t.Fatal(err)
		}
		want := []string{"the cgroup " + m.Cgroup, fmt.Sprintf("(limit %d MiB)", m.LimitMiB), fmt.Sprintf("held at most %d MiB", m.PeakMiB)}
		if m.OOMKills == 0 {
			want = append(want, "the OOM killer never struck")
		} else {
			want = append(want, fmt.Sprintf("the OOM killer killed %d process(es)", m.OOMKills))
		}
		for name, out := range map[string]string{"summary": sum.String(), "--verbose": full.String(), "report.html": htmlText(page.String())} {
			out = strings.Join(strings.Fields(out), " ")
			for _, w := range want {
				if !strings.Contains(out, w) {
					t.Errorf("%s: %q is not in the %s", use.Cgroup, w, name)
				}
			}
		}
	}
}

// TestNoMemoryLineOutsideALimit: a run outside a limited cgroup that met no kill has nothing to say of memory.
func TestNoMemoryLineOutsideALimit(t *testing.T) {
	r := recordedTuneFile(t, "testdata/tune-result-3.json")
	r.Memory = &tune.MemoryUse{Cgroup: "/", PeakBytes: 100 << 20}
	var sum, page bytes.Buffer
	TuneSummary(&sum, r)
	if err := TuneHTML(&page, r, nil); err != nil {
		t.Fatal(err)
	}
	if a := AnswerOf(r); a.Memory != nil || strings.Contains(sum.String(), "Memory:") || strings.Contains(page.String(), "memory used") {
		t.Errorf("a memory line without a limit or a kill")
	}
}
