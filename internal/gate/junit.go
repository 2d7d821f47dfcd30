package gate

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/phptune/phptune/internal/atomicfile"
)

// The JUnit XML that CI systems read (GitLab's test reports, Jenkins, GitHub's test-report actions): one test
// case a comparison. Worse is a failure, undecided is skipped (the job chooses), not worse passes.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// junitName is the suite's and the test cases' class name.
const junitName = "phptune gate"

// SaveJUnit writes the JUnit XML to path, whole or not at all.
func (r *Result) SaveJUnit(path string) error {
	var b bytes.Buffer
	if err := r.WriteJUnit(&b); err != nil {
		return err
	}
	return atomicfile.Save(path, b.Bytes())
}

// WriteJUnit writes the result as JUnit XML.
func (r *Result) WriteJUnit(w io.Writer) error {
	s := junitSuite{Name: junitName, Time: fmt.Sprintf("%.3f", r.ElapsedS), Properties: []junitProperty{
		{"old", where(r.Old)}, {"new", where(r.New)}, {"outcome", r.Outcome}, {"min_effect", share(r.MinEffect)},
		{"alpha", fmt.Sprint(r.Alpha)}, {"rounds", fmt.Sprint(r.Rounds)}}}
	for _, c := range r.Comparisons {
		tc := junitCase{Name: c.Name, Classname: junitName, Time: fmt.Sprintf("%.3f", c.Seconds)}
		detail := fmt.Sprintf("CPU a request: OLD %s us, NEW %s us; change %s %s at %.2f%%, %d rounds; %s", micros(c.OldUs),
			micros(c.NewUs), pct(c.Change), c.Interval(), 100*c.Level, c.Rounds, c.Says(r.MinEffect))
		if l := c.Latency; l != nil {
			detail += fmt.Sprintf("\np99 at %s requests/s: OLD %s ms, NEW %s ms (p50 %s, %s); change %s %s at %.2f%%; %s",
				perSecond(l.RatePerS), millis(l.OldP99Ms), millis(l.NewP99Ms), millis(l.OldP50Ms), millis(l.NewP50Ms),
				pct(l.Change), l.interval(c.Rounds), 100*l.Level, l.Says())
		}
		switch c.Gate {
		case Worse:
			tc.Failure = &junitMessage{Message: c.worseMessage(), Type: Worse, Text: detail}
			s.Failures++
		case Undecided:
			tc.Skipped = &junitMessage{Message: c.Says(r.MinEffect), Text: detail}
			s.Skipped++
		default:
			tc.SystemOut = detail
		}
		s.Cases = append(s.Cases, tc)
		s.Tests++
	}
	doc := junitSuites{Name: junitName, Tests: s.Tests, Failures: s.Failures, Skipped: s.Skipped, Time: s.Time,
		Suites: []junitSuite{s}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// worseMessage is a worse comparison's failure message: each figure NEW is shown worse on, by how much.
func (c Comparison) worseMessage() string {
	var parts []string
	if c.cpuGate() == Worse {
		parts = append(parts, fmt.Sprintf("NEW costs %s CPU a request %s", pct(c.Change), c.Interval()))
	}
	if l := c.Latency; l != nil && l.Gate == Worse {
		parts = append(parts, fmt.Sprintf("NEW's p99 at %s requests/s is %s %s", perSecond(l.RatePerS), pct(l.Change),
			l.interval(c.Rounds)))
	}
	return strings.Join(parts, "; ") + ": worse"
}
