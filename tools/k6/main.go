// Command k6 is Grafana k6 at the version pinned in go.mod, built from its Go module for phptune's --engine k6
// (make k6, or scripts/install-deps.sh). It is k6's own main, unchanged.
package main

import "go.k6.io/k6/cmd"

func main() { cmd.Execute() }
