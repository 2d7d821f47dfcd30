package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/phptune/phptune/internal/tune"
)

// answerJSON is result.json's "answer" as a reader of the file decodes it, apart from the model's own types.
type answerJSON struct {
	Level float64 `json:"level"`
	Joint bool    `json:"joint"`
	Knobs []struct {
		Knob   string      `json:"knob"`
		Value  string      `json:"value"`
		Start  string      `json:"start"`
		Change *changeJSON `json:"change"`
		Rounds int         `json:"rounds"`
	} `json:"knobs"`
	Headline *struct {
		Figures []struct {
			Metric     string  `json:"metric"`
			Rec        float64 `json:"recommendation"`
			VsBaseline *struct {
				Change changeJSON `json:"change"`
				Rounds int        `json:"rounds"`
			} `json:"vs_baseline"`
		} `json:"figures"`
	} `json:"headline"`
	Sweep *struct {
		Peak   int `json:"peak"`
		Points []struct {
			Conns int     `json:"connections"`
			RPS   float64 `json:"rps"`
		} `json:"points"`
	} `json:"sweep"`
}

type changeJSON struct {
	Pct       float64 `json:"pct"`
	Lo        float64 `json:"lo_pct"`
	Hi        float64 `json:"hi_pct"`
	Unbounded bool    `json:"unbounded"`
}

// texts are the change and its interval as the terminal prints them, from the file's figures; an interval the file
// marks unbounded is "[not bounded yet]" there.
func (c changeJSON) texts() (est, interval string) {
	interval = "[" + pctText(c.Lo) + ", " + pctText(c.Hi) + "]"
	if c.Unbounded {
		interval = "[not bounded yet]"
	}
	return pctText(c.Pct), interval
}

// htmlText is a page as a reader sees its text: tags out, entities and typographic signs as the terminal's.
func htmlText(page string) string {
	s := html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(page, " "))
	s = strings.NewReplacer("−", "-", "∞", "inf").Replace(s)
	return strings.Join(strings.Fields(s), " ")
}

// TestOneAnswerThreeWays: one recorded run rendered as text (the summary and --verbose), report.html and
// result.json states the same figures in all three: each change with its interval and rounds, the headline's
// change, interval and rounds, the sweep's peak and its figure, the level the verdicts hold at.
func TestOneAnswerThreeWays(t *testing.T) {
	for _, f := range []string{"testdata/tune-result-3.json", "testdata/tune-result-soak.json"} {
		r := recordedTuneFile(t, f)
		var js, sum, full, page bytes.Buffer
		if err := WriteJSON(&js, RecordOf(r)); err != nil {
			t.Fatal(err)
		}
		var rec struct {
			Answer *answerJSON `json:"answer"`
		}
		if err := json.Unmarshal(js.Bytes(), &rec); err != nil || rec.Answer == nil {
			t.Fatalf("%s: result.json's answer: %v", f, err)
		}
		a := rec.Answer
		// result.json read back (as phptune report and compare read it) gives the same answer, and the same file.
		var back tune.Result
		if err := json.Unmarshal(js.Bytes(), &back); err != nil {
			t.Fatal(err)
		}
		var again bytes.Buffer
		if err := WriteJSON(&again, RecordOf(&back)); err != nil || again.String() != js.String() {
			t.Errorf("%s: result.json read back and written again differs (%v)", f, err)
		}
		TuneSummary(&sum, r)
		Tune(&full, r)
		if err := TuneHTML(&page, r, nil); err != nil {
			t.Fatal(err)
		}
		text, summary, web := full.String(), strings.Join(strings.Fields(sum.String()), " "), htmlText(page.String())
		rowsHTML := htmlKnobRows(page.String())
		changes := 0
		for _, k := range a.Knobs {
			if k.Change == nil {
				continue
			}
			est, iv := k.Change.texts()
			rounds := fmt.Sprint(k.Rounds)
			if line := textKnobRow(text, k.Knob); !strings.Contains(line, est) || !strings.Contains(line, iv) ||
				!strings.HasSuffix(line, " "+rounds) {
				t.Errorf("%s: %s: the terminal's row %q, want %s %s in %s rounds", f, k.Knob, line, est, iv, rounds)
			}
			if row := rowsHTML[k.Knob]; !strings.Contains(row, est) || !strings.Contains(row, iv) || !strings.Contains(row, rounds+" rounds") {
				t.Errorf("%s: %s: report.html's row %q, want %s %s in %s rounds", f, k.Knob, row, est, iv, rounds)
			}
			if k.Start != "" {
				changes++
				if !strings.Contains(summary, est+" "+iv) || !strings.Contains(summary, rounds+" rounds") {
					t.Errorf("%s: the change of %s, %s %s in %s rounds, is not in the summary:\n%s", f, k.Knob, est, iv, rounds, sum.String())
				}
			}
		}
		if h := a.Headline; h != nil {
			for _, fig := range h.Figures {
				v := fig.VsBaseline
				if v == nil {
					continue
				}
				est, iv := v.Change.texts()
				for name, out := range map[string]string{"--verbose": text, "summary": summary} {
					if !strings.Contains(out, est+" "+iv) {
						t.Errorf("%s: the headline's %s %s is not in the %s", f, est, iv, name)
					}
				}
				if short, _ := metricWords(fig.Metric); !strings.Contains(web, est+" "+short+" against") {
					t.Errorf("%s: the headline's %s %s is not in report.html", f, est, short)
				}
				if !strings.Contains(web, "interval "+iv) {
					t.Errorf("%s: the headline's interval %s is not in report.html", f, iv)
				}
				rounds := fmt.Sprintf("%d rounds", v.Rounds)
				if !strings.Contains(summary, "("+rounds+" side by side)") || !strings.Contains(web, fmt.Sprintf("medians of %d interleaved rounds", v.Rounds)) {
					t.Errorf("%s: the headline's %s are not in the summary and report.html", f, rounds)
				}
				if !strings.Contains(text, rate(fig.Rec)) || !strings.Contains(web, rate(fig.Rec)) {
					t.Errorf("%s: the recommendation's %s %s is not in both", f, rate(fig.Rec), fig.Metric)
				}
			}
		}
		if s := a.Sweep; s != nil {
			peak := -1.0
			best := 0.0
			for _, p := range s.Points {
				best = max(best, p.RPS)
				if p.Conns == s.Peak {
					peak = p.RPS
				}
			}
			if peak != best {
				t.Errorf("%s: the peak at %d shows %g, the sweep's largest figure is %g", f, s.Peak, peak, best)
			}
			if !regexp.MustCompile(fmt.Sprintf(`peak %d\b`, s.Peak)).MatchString(text) || !strings.Contains(text, rate(peak)) {
				t.Errorf("%s: the terminal's sweep does not mark the peak %d at %s req/s", f, s.Peak, rate(peak))
			}
			if !strings.Contains(web, fmt.Sprintf("the peak at %d", s.Peak)) ||
				!strings.Contains(page.String(), fmt.Sprintf("%d connections: %s req/s", s.Peak, fnum(peak))) {
				t.Errorf("%s: report.html does not put the peak at %d, %s req/s", f, s.Peak, fnum(peak))
			}
		}
		if a.Joint {
			words := fmt.Sprintf("All verdicts of the run hold together at %s confidence", pctLevel(a.Level))
			if !strings.Contains(summary, words) || !strings.Contains(strings.Join(strings.Fields(text), " "), words) || !strings.Contains(web, words) {
				t.Errorf("%s: %q is not said in all three", f, words)
			}
			if regexp.MustCompile(`\d+\.\d+% CI|Intervals are at`).MatchString(text + web) {
				t.Errorf("%s: a level said as a figure where words say it once", f)
			}
		}
		if changes == 0 && f == "testdata/tune-result-3.json" {
			t.Errorf("%s: no change compared: the test checks nothing of the summary", f)
		}
	}
}

// textKnobRow is the knob's row in the --verbose table, its cells as printed ("" when it has none).
func textKnobRow(out, name string) string {
	in := false
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "  knob ") {
			in = true
			continue
		}
		if in && strings.HasPrefix(line, "  "+name+" ") {
			return strings.Join(strings.Fields(line), " ")
		}
	}
	return ""
}

// htmlKnobRows are the settings table's rows by knob, as text.
func htmlKnobRows(page string) map[string]string {
	rows := map[string]string{}
	for _, m := range regexp.MustCompile(`(?s)<tr class="knob" data-knob="([^"]+)">(.*?)</tr>`).FindAllStringSubmatch(page, -1) {
		rows[html.UnescapeString(m[1])] = htmlText(m[2])
	}
	return rows
}
