// Package k6 runs phptune's load through Grafana k6: it writes the k6 script from phptune's own request
// description, runs one or several k6 instances (execution segments, locally or over ssh), and reads their raw
// per-request points back into phptune's result, latency in one merged HDR histogram.
package k6

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"text/template"
	"time"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/load"
)

// The scripts phptune writes tag every point with PhaseTag, warmup or measure (Measured): only the measured
// points are counted.
const (
	PhaseTag = "phase"
	Measured = "measure"
	// BodyMetric counts accepted responses without their content marker (the script checks the body).
	BodyMetric = "phptune_body_errors"
	// minScenario is the shortest scenario k6 runs.
	minScenario = time.Second
)

// request is one entry of the mix as the script sends it.
type request struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Body    string            `json:"body,omitempty"` // base64
	Headers map[string]string `json:"headers"`
	Expect  string            `json:"expect,omitempty"` // a JavaScript RegExp source
	Flags   string            `json:"flags,omitempty"`
}

// Script is the k6 script for o: the mix with its weights (smooth weighted round robin, as phptune's own
// generator), the closed model as constant VUs or shared iterations, --rate as a constant arrival rate, the
// warm-up as a scenario of its own whose points are not counted.
func Script(o *load.Options) (string, error) {
	if o.Target.Protocol != load.HTTP {
		return "", exitcode.UsageErrorf("--engine k6: k6 speaks HTTP and %s is FastCGI: give an http:// target (nginx in front of php-fpm), or use --engine phptune", o.Target.Raw)
	}
	reqs, seq, err := requests(o)
	if err != nil {
		return "", err
	}
	scen, err := scenarios(o)
	if err != nil {
		return "", err
	}
	accept := acceptedStatuses(o.ExpectStatus)
	warm := o.Warmup
	if o.Requests > 0 {
		warm = 0 // the warm-up is a scenario of its own
	}
	data := map[string]string{
		"reqs": mustJSON(reqs), "seq": mustJSON(seq), "scenarios": mustJSON(scen), "accept": mustJSON(accept),
		"body": BodyMetric, "keep": fmt.Sprint(anyExpect(reqs)), "reuse": fmt.Sprint(!o.Request.KeepAlive),
		"timeout": durationJS(o.Timeout), "warm": fmt.Sprint(warm.Milliseconds()), "tag": PhaseTag, "measured": Measured,
	}
	var b strings.Builder
	if err := scriptTemplate.Execute(&b, data); err != nil {
		return "", fmt.Errorf("k6 script: %w", err)
	}
	return b.String(), nil
}

var scriptTemplate = template.Must(template.New("k6").Parse(`// Written by phptune: the load of one trial (k6 run --out json=- measures the "measure" scenario's points).
import http from 'k6/http';
import exec from 'k6/execution';
import encoding from 'k6/encoding';
import { Counter } from 'k6/metrics';

const bodyErrors = new Counter('{{.body}}');
const reqs = {{.reqs}};
const seq = {{.seq}};
const accept = new Set({{.accept}});
for (const r of reqs) {
	r.payload = r.body ? encoding.b64decode(r.body) : null;
	r.re = r.expect !== undefined ? new RegExp(r.expect, r.flags || '') : null;
	r.params = { headers: r.headers, timeout: '{{.timeout}}', responseType: r.re ? 'text' : 'none' };
}

export const options = {
	scenarios: {{.scenarios}},
	discardResponseBodies: !{{.keep}},
	noConnectionReuse: {{.reuse}},
	systemTags: ['status', 'error_code'],
	summaryTrendStats: ['med', 'p(99)'],
};

// Each VU starts at its own place in the mix's cycle, as phptune's own connections do. Every point of an
// iteration carries its phase: the warm-up scenario's, or the first {{.warm}} ms of the load scenario, are warmup.
export default function () {
	const warm = exec.scenario.name === 'warmup' || Date.now() - exec.scenario.startTime < {{.warm}};
	exec.vu.tags['{{.tag}}'] = warm ? 'warmup' : '{{.measured}}';
	const r = reqs[seq[(__ITER + __VU * 7919) % seq.length]];
	const res = http.request(r.method, r.url, r.payload, r.params);
	if (r.re && accept.has(res.status) && !r.re.test(res.body || '')) {
		bodyErrors.add(1);
	}
}
`))

func requests(o *load.Options) ([]request, []int, error) {
	mix := o.Mix
	if len(mix) == 0 {
		mix = []load.MixItem{{URI: o.Target.RequestURI, Weight: 1}}
	}
	reqs := make([]request, len(mix))
	for i, m := range mix {
		r := m.RequestOver(o.Request)
		rq := request{Method: r.Method, URL: "http://" + o.Target.Address + m.URI, Headers: map[string]string{}}
		if o.Target.Host != "" && o.Target.Host != o.Target.Address {
			rq.Headers["Host"] = o.Target.Host
		}
		for _, h := range r.Headers {
			if v, ok := rq.Headers[h[0]]; ok {
				rq.Headers[h[0]] = v + ", " + h[1]
			} else {
				rq.Headers[h[0]] = h[1]
			}
		}
		if len(r.Body) > 0 {
			rq.Body = base64.StdEncoding.EncodeToString(r.Body)
		}
		re := m.ExpectBody
		if re == nil {
			re = o.ExpectBody
		}
		if re != nil {
			var err error
			if rq.Expect, rq.Flags, err = jsRegExp(re); err != nil {
				return nil, nil, err
			}
		}
		reqs[i] = rq
	}
	seq := []int{}
	for _, i := range load.MixSequence(mix) {
		seq = append(seq, int(i))
	}
	return reqs, seq, nil
}

// jsRegExp turns a Go regular expression into a JavaScript one: leading (?i), (?s) and (?m) become flags; the
// rest is the common syntax of both (k6 rejects at start-up what JavaScript cannot read).
func jsRegExp(re *regexp.Regexp) (src, flags string, err error) {
	src = re.String()
	for {
		m := regexp.MustCompile(`^\(\?([ism]+)\)`).FindStringSubmatch(src)
		if m == nil {
			break
		}
		flags += m[1]
		src = src[len(m[0]):]
	}
	if strings.Contains(src, "(?") && !strings.Contains(src, "(?:") {
		return "", "", exitcode.UsageErrorf("--expect-body %q: k6 checks the body with a JavaScript RegExp, which has no inline flags: put (?i), (?s) or (?m) at the start", re.String())
	}
	return src, flags, nil
}

func acceptedStatuses(codes []int) []int {
	if len(codes) > 0 {
		return codes
	}
	var a []int
	for c := 100; c < 400; c++ {
		a = append(a, c)
	}
	return a
}

func anyExpect(reqs []request) bool {
	for _, r := range reqs {
		if r.Expect != "" {
			return true
		}
	}
	return false
}

// scenarios is the load: with -d one scenario of warm-up plus window (k6 runs none shorter than a second), the
// script telling the phases apart by the time each request starts; with -n the warm-up (a second at least) and
// then the requests. The requests started in the window are counted, and those in flight at its end are let
// finish (gracefulStop, up to the timeout): the count over the window is then the rate without the bias of
// dropping one request per VU at the end.
func scenarios(o *load.Options) (map[string]map[string]any, error) {
	if o.Requests > 0 {
		if o.Rate > 0 {
			return nil, exitcode.UsageErrorf("--engine k6: give --rate with -d, not -n")
		}
		s := map[string]map[string]any{}
		start := time.Duration(0)
		if o.Warmup > 0 {
			start = max(o.Warmup, minScenario)
			s["warmup"] = map[string]any{"executor": "constant-vus", "vus": o.Connections, "duration": durationJS(start), "gracefulStop": "0s"}
		}
		s["load"] = map[string]any{"executor": "shared-iterations", "vus": o.Connections, "iterations": o.Requests,
			"maxDuration": "24h", "startTime": durationJS(start), "gracefulStop": durationJS(o.Timeout)}
		return s, nil
	}
	if o.Warmup+o.Duration < minScenario {
		return nil, exitcode.UsageErrorf("--engine k6: k6 runs a test of a second at least: give -d and --warmup that add up to 1s or more")
	}
	m := map[string]any{"executor": "constant-vus", "vus": o.Connections, "duration": durationJS(o.Warmup + o.Duration)}
	if o.Rate > 0 {
		// k6's rate is whole iterations per time unit: per 1000 s keeps three decimals of requests/s.
		m = map[string]any{"executor": "constant-arrival-rate", "rate": int64(o.Rate*1000 + 0.5), "timeUnit": "1000s",
			"duration": durationJS(o.Warmup + o.Duration), "preAllocatedVUs": o.Connections, "maxVUs": o.Connections}
	}
	m["gracefulStop"] = durationJS(o.Timeout)
	return map[string]map[string]any{"load": m}, nil
}

// durationJS is a duration as k6 reads it (whole milliseconds).
func durationJS(d time.Duration) string { return fmt.Sprintf("%dms", d.Milliseconds()) }

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps, slices, strings and numbers
	}
	return string(b)
}
