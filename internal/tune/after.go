package tune

import (
	"context"

	"github.com/phptune/phptune/internal/load"
	"github.com/phptune/phptune/internal/profile"
)

// KeepLogin makes o's LogIn, when there is one, keep the mix it returns as o.URLs: the session, for what runs
// after the run (ProfileAfter), which speaks FastCGI and cannot log in itself.
func (o *Options) KeepLogin() {
	login := o.LogIn
	if login == nil {
		return
	}
	o.LogIn = func(ctx context.Context, base string) ([]load.MixItem, error) {
		urls, err := login(ctx, base)
		if err == nil {
			o.URLs = urls
		}
		return urls, err
	}
}

// ProfileAfter profiles the starting point beside the recommendation, per request (tune --profile): why the
// recommendation is faster, after the budget and kept out of the verdicts; progress is told each step. It
// returns ctx's error when interrupted (what there is is kept in res); other failures are a warning in res.
func ProfileAfter(ctx context.Context, o Options, res *Result, progress func(variant, step string)) error {
	po := profile.Options{Stack: o.Stack, AppName: o.AppName, URLs: o.URLs, Request: o.Request, Progress: progress,
		Variants: []profile.Variant{{Name: "starting point", Config: res.Baseline}, {Name: "recommendation", Config: res.Recommendation}}}
	pr, err := profile.Run(ctx, po)
	if pr != nil {
		res.Profile = pr
	}
	if err != nil && ctx.Err() != nil {
		return err
	}
	if err != nil {
		res.Warnings = append(res.Warnings, "tune --profile: "+err.Error())
	}
	return nil
}
