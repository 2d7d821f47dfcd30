package stack

import (
	"fmt"
	"strings"

	"github.com/phptune/phptune/internal/atomicfile"
)

// WriteEnv writes the stack's endpoints to path as shell variables, for serve --env-file: PHPTUNE_HTTP,
// PHPTUNE_FCGI and PHPTUNE_UNIX (bench's targets; a pool's empty when the stack has none), PHPTUNE_DOCROOT,
// PHPTUNE_SCRIPT and PHPTUNE_RUNDIR.
func (s *Stack) WriteEnv(path string) error {
	script := s.Script()
	tcp, unix := s.Endpoints()
	target := func(ep Endpoint) string {
		if ep.Address == "" {
			return ""
		}
		return ep.URL(script)
	}
	env := fmt.Sprintf("PHPTUNE_HTTP=%s\nPHPTUNE_FCGI=%s\nPHPTUNE_UNIX=%s\nPHPTUNE_DOCROOT=%s\nPHPTUNE_SCRIPT=%s\nPHPTUNE_RUNDIR=%s\n",
		shellQuote(s.HTTPURL), shellQuote(target(tcp)), shellQuote(target(unix)), shellQuote(s.Docroot), shellQuote(script),
		shellQuote(s.RunDir))
	return atomicfile.Save(path, []byte(env))
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
