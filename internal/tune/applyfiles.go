package tune

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/phptune/phptune/internal/apply"
	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stack"
)

// ReadRecommendation reads the recommendation of a tune run's result.json at path (serve --recommendation): its
// runtime, pool, ini settings and master's settings. Anything else is a usage error.
func ReadRecommendation(path string) (*knob.Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, exitcode.UsageErrorf("--recommendation: %v", err)
	}
	var res struct {
		Schema         string       `json:"schema"`
		Recommendation *knob.Config `json:"recommendation"`
	}
	if err := json.Unmarshal(data, &res); err != nil || res.Schema != Schema || res.Recommendation == nil {
		return nil, exitcode.UsageErrorf("--recommendation %s: not a tune result (schema %s with a recommendation): give tune's result.json", path, Schema)
	}
	return res.Recommendation, nil
}

// WriteFiles writes r's recommendation as files for a Debian server (apply.Write) into dir, for the stack sc it
// was measured on, starting from the user's files from; steps writes apply.txt. It sets r.Apply and r.Files.
func (r *Result) WriteFiles(ctx context.Context, dir string, sc stack.Config, from apply.From,
	steps func(w io.Writer, p *apply.Plan, dir string)) (err error) {
	r.Apply, r.Files, err = apply.Write(ctx, dir, r.applyRequest(sc, from, steps))
	return err
}

// applyRequest is what apply.Write is asked for r: the workers for the place's whole CPUs (the host's when no
// limit was read), the docroot as an absolute path, and a header that says where and when r was measured.
func (r *Result) applyRequest(sc stack.Config, from apply.From, steps func(w io.Writer, p *apply.Plan, dir string)) apply.Request {
	t := apply.Target{Workers: r.Environment.Host.CPUs, Front: sc.Front}
	if l := r.Environment.Limits; l != nil {
		t.Workers = l.WholeCPUs()
	}
	if sc.App != "" {
		t.Docroot, _ = filepath.Abs(sc.App)
	}
	header := []string{
		fmt.Sprintf("phptune tune recommendation for %s, measured on %s (%d CPUs) on %s.", r.App, r.Environment.Host.CPUModel,
			r.Environment.Host.CPUs, r.Started.Format("2006-01-02")),
		"Valid for this host and this load; measure again before applying it elsewhere.",
	}
	return apply.Request{Rec: r.Recommendation, From: from, Target: t, Header: header,
		Servers: apply.Servers{PHPFPM: sc.PHPFPM, Nginx: sc.Nginx, Apache: sc.Apache}, Banner: r.Environment.PHP, Steps: steps}
}
