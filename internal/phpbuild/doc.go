// Package phpbuild builds PHP from source into a build cache, one prefix per variant (baseline, PGO trained on
// the user's own requests), smoke-tests each binary by serving the demo app, and verifies the gain against the
// baseline: time per request pinned to one CPU in interleaved rounds (internal/stats decides), on the training
// URLs, a held-out set and a guard (Zend/bench.php), with instructions per request from callgrind as a
// cross-check that is never reported as the gain.
//
// Every step runs in a private directory: sources come from Debian's archive through a private apt
// configuration (never /etc/apt), a variant is built in a temporary tree and installed into its prefix by one
// rename, so an interrupted build leaves no half-installed prefix.
package phpbuild
