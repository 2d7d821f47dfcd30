package main

import (
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/phptune/phptune/internal/cli"
	"github.com/phptune/phptune/internal/exitcode"
)

// newManCmd writes the man pages (phptune.1, phptune-tune.1, ...) from the commands' help: the Debian package
// ships them (scripts/deb.sh). Hidden: it is for packaging, not for users.
func newManCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "man DIR",
		Short:  "Write the man pages into DIR",
		Hidden: true,
		Args:   cli.Args(1, 1, "DIR, where to write the man pages"),
		RunE: run(func(cmd *cobra.Command, args []string) error {
			if err := os.MkdirAll(args[0], 0o755); err != nil {
				return exitcode.UsageErrorf("man %s: %v", args[0], err)
			}
			root := cmd.Root()
			root.DisableAutoGenTag = true
			for _, c := range allCommands(root) {
				c.Long = cli.ManSections(c.Long)
			}
			return doc.GenManTree(root, &doc.GenManHeader{Title: "PHPTUNE", Section: "1", Source: "phptune " + version,
				Manual: "phptune manual"}, args[0])
		}),
	}
}

func allCommands(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, s := range c.Commands() {
		out = append(out, allCommands(s)...)
	}
	return out
}
