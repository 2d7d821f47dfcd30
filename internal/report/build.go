package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/phptune/phptune/internal/phpbuild"
	"github.com/phptune/phptune/internal/textline"
)

// Build prints the build result: the variants, and per set the time per request, the gain against the
// baseline with its interval, the verdict and instructions per request (a cross-check, never the gain); the level
// the intervals hold at is said once, in words.
func Build(w io.Writer, r *phpbuild.Result) {
	fmt.Fprintf(w, "phptune build: PHP %s (%s), %s\n", r.Source.Version, r.Source.Origin, strings.Join(r.Configure, " "))
	if len(r.Extensions.LeftOut) > 0 {
		for _, l := range r.Extensions.LeftOut {
			fmt.Fprintf(w, "  left out: %s: %s\n", l.Name, l.Reason)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	fmt.Fprintln(w)
	nw := 9 // the name column fits the longest name (pgo+huge_code_pages)
	for _, v := range r.Variants {
		nw = max(nw, len(v.Name))
	}
	for _, v := range r.Variants {
		if !v.Available {
			fmt.Fprintf(w, "  %-*s unavailable: %s\n", nw, v.Name, textline.First(v.Reason))
			continue
		}
		how := "built in " + secs(v.BuildSeconds)
		switch {
		case v.Name == phpbuild.Debian:
			how = "Debian's own binary"
		case v.Of != "":
			how = v.Of + "'s binaries, run with " + v.Setting
		case v.Cached:
			how = "cached"
		}
		fmt.Fprintf(w, "  %-*s %s  (%s)\n", nw, v.Name, v.Prefix, how)
		for _, warn := range v.Warnings {
			fmt.Fprintf(w, "            gcc: %s\n", warn)
		}
	}
	if r.Rounds == 0 {
		return
	}
	fmt.Fprintf(w, "\nTime per request, php-cgi -T pinned to CPU %d, %d interleaved rounds (gain: positive = faster than baseline)\n", r.CPU, r.Rounds)
	fmt.Fprintf(w, "  %-*s %-8s %12s %26s %-14s %14s\n", nw, "variant", "set", "time/req", "gain [interval]", "verdict", "instr/req")
	for _, v := range r.Variants {
		if v.TimePerReqUS == nil {
			continue
		}
		for _, set := range phpbuild.SetNames {
			t, ok := v.TimePerReqUS[set]
			if !ok {
				continue
			}
			gain, verdict := "(reference)", ""
			if g, ok := v.GainPct[set]; ok {
				ci := v.GainCIPct[set]
				gain = fmt.Sprintf("%+.1f%% [%+.1f, %+.1f]", g, ci[0], ci[1])
				verdict = v.Verdict[set]
			}
			ipr := ""
			if n, ok := v.IPR[set]; ok {
				ipr = fmt.Sprintf("%.3gM", n/1e6)
				if c, ok := v.IPRChangePct[set]; ok {
					ipr += fmt.Sprintf(" (%+.1f%%)", c)
				}
			}
			fmt.Fprintf(w, "  %-*s %-8s %12s %26s %-14s %14s\n", nw, v.Name, set, us(t), gain, verdict, ipr)
		}
	}
	for _, v := range r.Variants {
		if t := v.Throughput; t != nil {
			fmt.Fprintln(w)
			writeWrapped(w, "  ", "    ", fmt.Sprintf("%s through php-fpm (training URLs, 1 worker, %d interleaved trials): %.0f req/s "+
				"vs baseline %.0f: %+.1f%% [%+.1f, %+.1f] %s", v.Name, t.Trials, t.RPS, t.BaselineRPS, t.GainPct, t.GainCIPct[0],
				t.GainCIPct[1], t.Verdict), termWidth)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "  "+buildLevelSentence(r))
	fmt.Fprintln(w, "  Instructions per request are a cross-check, not the verdict: blind to code layout, where PGO gains most (on")
	fmt.Fprintln(w, "  CPU-bound code they understate the gain), and to time outside PHP (a database, the kernel), which PGO cannot cut.")
	if r.Partial {
		fmt.Fprintln(w, "  PARTIAL: interrupted; the rounds so far are above.")
	}
}
