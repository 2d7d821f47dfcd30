package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/phptune/phptune/internal/suggest"
)

// Args checks a command's positional arguments and names what is missing or extra in words ("missing TARGET,
// the address to load"), where cobra would say "accepts 1 arg(s), received 0". want describes the arguments;
// most < 0: no limit.
func Args(least, most int, want string) cobra.PositionalArgs {
	return func(c *cobra.Command, got []string) error {
		switch {
		case len(got) < least:
			return fmt.Errorf("%s: missing %s (see %s --help)", c.CommandPath(), want, c.CommandPath())
		case most >= 0 && len(got) > most:
			takes := "no arguments"
			if most > 0 {
				takes = want
			}
			return fmt.Errorf("%s takes %s; got %d: %s (quote an argument with spaces)", c.CommandPath(), takes, len(got),
				strings.Join(got, " "))
		}
		return nil
	}
}

// FlagError is cobra's flag error with the nearest flag names for an unknown one.
func FlagError(c *cobra.Command, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		var names []string
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				names = append(names, f.Name)
			}
		})
		if near := suggest.Nearest(name, names); len(near) > 0 {
			return fmt.Errorf("unknown flag --%s (did you mean --%s?; see %s --help)", name, strings.Join(near, " or --"), c.CommandPath())
		}
	}
	return fmt.Errorf("%w (see %s --help)", err, c.CommandPath())
}

// UnknownCommand is an error message on one line: cobra's unknown command error lists its suggestions on lines of
// their own.
func UnknownCommand(msg string) string {
	msg = strings.TrimSpace(msg)
	head, near, ok := strings.Cut(msg, "\n\nDid you mean this?\n")
	if !ok {
		return msg
	}
	return head + " (did you mean " + suggest.Or(strings.Fields(near)) + "?)"
}
