package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// TestReportHTMLSaysHowItDecidedInWords: report.html's environment says how the run decided in the summary's
// words (the level once, the minimum effect as a difference that counts as none), never the method's name or its
// error budget as a figure; the docs name the method.
func TestReportHTMLSaysHowItDecidedInWords(t *testing.T) {
	for _, f := range []string{"testdata/tune-result-3.json", "testdata/tune-result-soak.json"} {
		r := recordedTuneFile(t, f)
		var page bytes.Buffer
		if err := TuneHTML(&page, r, nil); err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?s)<dt>decisions</dt><dd>(.*?)</dd>`).FindStringSubmatch(page.String())
		if m == nil {
			t.Fatalf("%s: no decisions row", f)
		}
		row := htmlText(m[1])
		if s := levelSentence(AnswerOf(r)); s == "" || !strings.Contains(row, s) {
			t.Errorf("%s: the decisions row does not say the level as the summary does (%q): %s", f, s, row)
		}
		if !strings.Contains(row, "counts as none") {
			t.Errorf("%s: the decisions row does not say the minimum effect in words: %s", f, row)
		}
		if bad := regexp.MustCompile(`(?i)confidence sequence|sequential|error budget|alpha`).FindString(row); bad != "" {
			t.Errorf("%s: the decisions row says %q: %s", f, bad, row)
		}
	}
}
