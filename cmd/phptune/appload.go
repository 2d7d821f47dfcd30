package main

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/phpini"
	"github.com/phptune/phptune/internal/stack"
)

// parseURLs reads --url PATH[=WEIGHT] values, each response checked against check (nil: no check).
func parseURLs(urls []string, check *regexp.Regexp) ([]load.MixItem, error) {
	var out []load.MixItem
	for _, u := range urls {
		path, w, hasW := cutWeight(u)
		weight := 1
		if hasW {
			var err error
			if weight, err = strconv.Atoi(w); err != nil || weight < 1 {
				return nil, exitcode.UsageErrorf("--url %s: the weight must be a whole number of at least 1", u)
			}
		}
		if !strings.HasPrefix(path, "/") {
			return nil, exitcode.UsageErrorf("--url %s: give a path starting with /, as in --url /blog/", u)
		}
		out = append(out, load.MixItem{URI: path, Weight: weight, ExpectBody: check})
	}
	return out, nil
}

// cutWeight splits PATH[=WEIGHT] at its last '=', unless that '=' is the query's own: /a?page=2 is a path,
// /a?page=2=3 and /a=3 are weighted 3.
func cutWeight(u string) (path, weight string, ok bool) {
	i := strings.LastIndexByte(u, '=')
	if i < 0 {
		return u, "", false
	}
	if q := strings.IndexByte(u[:i], '?'); q >= 0 {
		params := u[q+1 : i]
		if !strings.Contains(params[strings.LastIndexByte(params, '&')+1:], "=") {
			return u, "", false
		}
	}
	return u[:i], u[i+1:], true
}

// parseRequest reads -m, -H and --body into the request every URL is sent with.
func parseRequest(method string, headers []string, bodyFile string, keepAlive bool) (load.Request, error) {
	req := load.Request{Method: method, KeepAlive: keepAlive}
	for _, h := range headers {
		hv, err := load.ParseHeader(h)
		if err != nil {
			return req, err
		}
		req.Headers = append(req.Headers, hv)
	}
	if bodyFile != "" {
		var err error
		if req.Body, err = os.ReadFile(bodyFile); err != nil {
			return req, exitcode.UsageErrorf("--body: %v", err)
		}
	}
	return req, nil
}

// baseConfig is the starting configuration: Debian's pool, or the user's --from-pool, --from-apache and
// --from-ini files, with --ini KEY=VALUE settings over it; pins gets each setting (nil: not recorded).
func baseConfig(fromPool, prefix, fromINI, fromApache string, inis []string, pins map[string]string) (knob.Config, error) {
	base := knob.Debian()
	if fromPool != "" {
		if err := base.FromPoolFileAt(fromPool, prefix); err != nil {
			return base, err
		}
	}
	if fromApache != "" {
		if err := base.FromApacheFile(fromApache); err != nil {
			return base, err
		}
	}
	if fromINI != "" {
		if err := base.FromINIFile(fromINI); err != nil {
			return base, err
		}
	}
	for _, kv := range inis {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return base, exitcode.UsageErrorf("--ini %q: want KEY=VALUE", kv)
		}
		base.SetSetting(k, v)
		if pins != nil {
			pins[k] = v
			if k == "opcache.enable" {
				pins["opcache"] = v
			}
		}
	}
	return base, nil
}

// checkNames refuses the names of --knob and --compare (each value NAME=...) and of --ini (KEY=VALUE) that would
// set nothing in fpmBin: PHP's ini directives are read once, only when a name is not a knob's.
func checkNames(ctx context.Context, fpmBin string, known []knob.Knob, knobFlags map[string][]string, inis []string) error {
	var dirs []string
	directives := func() ([]string, error) {
		if dirs != nil {
			return dirs, nil
		}
		bin, err := stack.FindPHPFPM(fpmBin)
		if err != nil {
			return nil, err
		}
		dirs, err = phpini.Directives(ctx, bin)
		return dirs, err
	}
	for _, flag := range []string{"--knob", "--compare"} {
		for _, kv := range knobFlags[flag] {
			// A value without = is told what to give where it is parsed.
			if name, _, ok := strings.Cut(kv, "="); ok && name != "" {
				if err := knob.CheckName(flag, name, known, true, directives); err != nil {
					return err
				}
			}
		}
	}
	for _, kv := range inis {
		if name, _, ok := strings.Cut(kv, "="); ok && name != "" {
			if err := knob.CheckName("--ini", name, known, false, directives); err != nil {
				return err
			}
		}
	}
	return nil
}
