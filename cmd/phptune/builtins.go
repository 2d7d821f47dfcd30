package main

import (
	"github.com/spf13/cobra"

	"github.com/phptune/phptune/internal/cli"
)

// completionShells are the shells cobra writes a completion script for: each one's examples (loading it now and
// for every new session) and what a reader needs besides.
var completionShells = map[string]struct{ example, long string }{
	"bash": {`  source <(phptune completion bash)                         # this session
  phptune completion bash > /etc/bash_completion.d/phptune  # every new session (as root)`,
		"Print bash's completion script for phptune. It needs Debian's bash-completion package; the phptune package " +
			"installs the script already."},
	"zsh": {`  source <(phptune completion zsh)                 # this session
  phptune completion zsh > "${fpath[1]}/_phptune"  # every new session`,
		"Print zsh's completion script for phptune. Completion must be on in zsh: autoload -U compinit; compinit in ~/.zshrc."},
	"fish": {`  phptune completion fish | source                                   # this session
  phptune completion fish > ~/.config/fish/completions/phptune.fish  # every new session`,
		"Print fish's completion script for phptune."},
	"powershell": {`  phptune completion powershell | Out-String | Invoke-Expression  # this session`,
		"Print PowerShell's completion script for phptune; add the example's line to your profile for every new session."},
}

// builtinsHelp describes the commands cobra adds, help and completion, as phptune's own are described (help has
// no man page of its own: no LEARN MORE to point at one).
func builtinsHelp(root *cobra.Command) {
	completionHelp(root)
	root.InitDefaultHelpCmd()
	for _, c := range root.Commands() {
		if c.Name() == "help" {
			c.Short = "Print a command's help, as COMMAND --help does"
			c.Example = "  phptune help tune          # the same as phptune tune --help\n  phptune help export k6"
			c.Long = "Help for a command, its flags and examples, as the command's --help prints it."
		}
	}
}

// completionDocs is where the completion commands' help sends a reader for more.
const completionDocs = "docs/install.md (the Debian package, which installs bash's script)"

// completionHelp gives cobra's completion command and its shells the help phptune's own commands have: usage,
// examples, a short about, LEARN MORE. Cobra's own gives no example, and speaks of brew and of markdown headings.
// Cobra adds the command as it executes, unless it is there already: it is added here, to be described.
func completionHelp(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		c.Short = "Print a script that completes phptune's commands and flags in your shell"
		c.Example = completionShells["bash"].example
		c.Long = "The script completes commands, flags and their values as you type them. The Debian package installs " +
			"bash's; the other shells' are one command each."
		cli.LearnMore(c, completionDocs)
		for _, sh := range c.Commands() {
			if s, ok := completionShells[sh.Name()]; ok {
				sh.Short = "Print " + sh.Name() + "'s completion script"
				sh.Example, sh.Long = s.example, s.long
				cli.LearnMore(sh, completionDocs)
			}
		}
	}
}
