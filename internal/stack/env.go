package stack

import (
	"fmt"

	"github.com/phptune/phptune/internal/atomicfile"
	"github.com/phptune/phptune/internal/textline"
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
		textline.Quote(s.HTTPURL), textline.Quote(target(tcp)), textline.Quote(target(unix)), textline.Quote(s.Docroot), textline.Quote(script),
		textline.Quote(s.RunDir))
	return atomicfile.Save(path, []byte(env))
}
