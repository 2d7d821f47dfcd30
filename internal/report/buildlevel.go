package report

import (
	"fmt"

	"github.com/phptune/phptune/internal/phpbuild"
	"github.com/phptune/phptune/internal/stats"
)

// buildLevel is the confidence at which the build's verdicts hold together: 1 - the error budget they share. A
// result from before the budget was recorded (Alpha 0) was made on the same one, stats.DefaultAlpha, shared the
// same way by the verification and the throughput check.
func buildLevel(r *phpbuild.Result) float64 {
	a := r.Alpha
	if !(a > 0 && a < 1) {
		a = stats.DefaultAlpha
	}
	return 1 - a
}

// buildLevelSentence says once, in words as tune's summary does, how far the build's intervals and verdicts can
// be trusted: the verification's rounds stop once every comparison is decided, and the level holds all the same.
func buildLevelSentence(r *phpbuild.Result) string {
	return fmt.Sprintf("All verdicts of the build hold together at %s confidence, however early its rounds stopped.",
		pctLevel(buildLevel(r)))
}
