package main

import "github.com/phptune/phptune/internal/tune"

// The flags several commands share say the same, with one default (TestFlagsMeanOneThing).
const (
	defaultMinEffectPct = 100 * tune.DefaultMinEffect
	minEffectUsage      = "smallest change in % that counts as better or worse; no_difference means within it"
	alphaUsage          = "error budget of the run: the chance, at most, that any verdict is wrong"
	timeoutUsage        = "per-request timeout; a request unanswered by then counts as timed out"
)
