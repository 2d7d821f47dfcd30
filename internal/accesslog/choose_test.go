package accesslog

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// timedLog has routes /a (50 requests), /b (30), /c (15), /d (4), /e (1), with a time per request.
func timedLog() string {
	var b strings.Builder
	add := func(n int, uri string, seconds float64) {
		for range n {
			fmt.Fprintf(&b, "%s %.3f\n", combined("GET", uri, 200), seconds)
		}
	}
	add(30, "/a/1", 0.010)
	add(20, "/a/2", 0.010)
	add(30, "/b", 0.001)
	add(15, "/c", 0.020)
	add(4, "/d", 1.000)
	add(1, "/e", 5.000)
	return b.String()
}

func patterns(m *Mix) string {
	var out []string
	for _, r := range m.Routes {
		out = append(out, r.Pattern+":"+r.Why)
	}
	return strings.Join(out, " ")
}

func TestChooseCoverage(t *testing.T) {
	m := readString(t, logOf(append(append(append(times(50, "/a"), times(30, "/b")...), times(15, "/c")...), times(5, "/d")...)...), Options{})
	if got := patterns(m); got != "/a:requests /b:requests /c:requests" {
		t.Errorf("routes %s, want /a /b /c (95%% coverage)", got)
	}
	if math.Abs(m.Covered-0.95) > 1e-9 {
		t.Errorf("covered %v", m.Covered)
	}
}

func TestChooseTop(t *testing.T) {
	var uris []string
	for i := range 15 {
		uris = append(uris, times(15-i, fmt.Sprintf("/r%c", 'a'+i))...)
	}
	m := readString(t, logOf(uris...), Options{Top: 4})
	if got := patterns(m); got != "/ra:requests /rb:requests /rc:requests /rd:requests" {
		t.Errorf("routes %s", got)
	}
	if len(readString(t, logOf(uris...), Options{}).Routes) != defaultTop {
		t.Errorf("default Top is not %d", defaultTop)
	}
}

func TestChooseByTime(t *testing.T) {
	m := readString(t, timedLog(), Options{})
	if !m.HasTime {
		t.Fatal("no time read")
	}
	want := "/a/{n}:requests+time /b:requests /c:requests /e:time /d:time"
	if got := patterns(m); got != want {
		t.Fatalf("routes %s, want %s", got, want)
	}
	r := m.Routes[3]
	allTime := 50*0.010 + 30*0.001 + 15*0.020 + 4*1.0 + 5.0
	if math.Abs(r.MeanTime-5) > 1e-9 || math.Abs(r.TimeShare-5/allTime) > 1e-9 || math.Abs(r.Share-0.01) > 1e-9 {
		t.Errorf("/e: %+v", r)
	}
	if math.Abs(m.Covered-1) > 1e-9 {
		t.Errorf("covered %v", m.Covered)
	}
}

func TestChooseNoTimeNoTimePicks(t *testing.T) {
	m := readString(t, logOf(append(times(99, "/a"), "/b")...), Options{Coverage: 0.5})
	if got := patterns(m); got != "/a:requests" || m.HasTime || m.Routes[0].MeanTime != 0 || m.Routes[0].TimeShare != 0 {
		t.Errorf("routes %s, time %v, %+v", got, m.HasTime, m.Routes)
	}
}

func TestWeights(t *testing.T) {
	m := readString(t, timedLog(), Options{})
	sum, n := 0, 0
	for _, r := range m.Routes {
		for _, e := range r.Examples {
			if e.Weight < 1 {
				t.Errorf("%s weight %d", e.URI, e.Weight)
			}
			sum += e.Weight
			n++
		}
	}
	if sum > weightTotal+n || sum < weightTotal-n {
		t.Errorf("weights add up to %d", sum)
	}
	// 50, 30, 15, 1, 4 of 100 chosen requests; /a's 50 split 30:20.
	a := m.Routes[0].Examples
	if a[0].URI != "/a/1" || a[0].Weight != 300 || a[1].Weight != 200 || m.Routes[1].Examples[0].Weight != 300 ||
		m.Routes[3].Examples[0].Weight != 10 || m.Routes[4].Examples[0].Weight != 40 {
		t.Errorf("weights %+v", m.Routes)
	}
}

func TestWeightsExamplesOnly(t *testing.T) {
	// Only the shown examples share the route's weight; a route too small still gets 1.
	uris := append(append(append(times(5000, "/p/1"), times(3000, "/p/2")...), times(1000, "/p/3")...), "/rare")
	m := readString(t, logOf(uris...), Options{Examples: 2, Coverage: 1})
	p, rare := m.Routes[0], m.Routes[1]
	if len(p.Examples) != 2 || p.Examples[0].Weight != 625 || p.Examples[1].Weight != 375 || rare.Examples[0].Weight != 1 {
		t.Errorf("routes %+v", m.Routes)
	}
}

func TestExamplesTiesByFirstSeen(t *testing.T) {
	m := readString(t, logOf("/p/9", "/p/3", "/p/5", "/p/3", "/p/1"), Options{Examples: 3})
	if got := exampleURIs(m.Routes[0]); strings.Join(got, " ") != "/p/3 /p/9 /p/5" {
		t.Errorf("examples %v", got)
	}
}
