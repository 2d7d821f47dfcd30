package phpbuild

import (
	"time"

	"github.com/phptune/phptune/internal/measure"
)

// Environment is where a build ran and was measured: its figures hold for this host and compiler.
type Environment struct {
	Host        measure.Host `json:"host"`
	Compiler    string       `json:"compiler,omitempty"`
	Started     time.Time    `json:"started"`
	CommandLine []string     `json:"command_line,omitempty"`
}

func newEnvironment() *Environment {
	e := &Environment{Started: time.Now()}
	e.Host, _ = measure.ReadHost() // best effort: the report shows what could be read
	return e
}
