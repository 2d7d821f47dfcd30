// Package phpsrc embeds phptune's PHP side (the clients benchmark runner and its IPROTO and RESP clients), so
// that the installed binary works from any directory: phptune writes these files into a private temp dir.
package phpsrc

import "embed"

// FS holds lib.php (the clients and the Fiber scheduler), ops.php (the operations and their checks) and
// runner.php (one benchmark iteration).
//
//go:embed lib.php ops.php runner.php
var FS embed.FS
