package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/phptune/phptune/internal/cli"
	"github.com/phptune/phptune/internal/report"
	"github.com/phptune/phptune/internal/textline"
	"github.com/phptune/phptune/internal/workload"
	"github.com/spf13/cobra"
)

func newWorkloadCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workload",
		Short: "Real PHP applications from Debian packages, prepared in one command to serve and tune by name",
		Long: `Workload presets are real applications (DokuWiki, WordPress, ...) from Debian packages, and the bundled demo.
Once prepared, serve, tune, profile and build take one by name, with its URLs, a content marker per URL (a broken
page, even a fast 200, is never measured as the app) and its own services (a private database).`,
		Example: `  phptune workload list
  phptune workload prepare wordpress && phptune tune wordpress`,
	}
	cli.LearnMore(cmd, `docs/workloads.md (the presets, their URLs and services)`)
	cmd.AddCommand(newWorkloadListCmd(s, nil), newWorkloadPrepareCmd(s, nil))
	return cmd
}

// workloadFlags are workload list's and prepare's flags.
type workloadFlags struct {
	dir  string
	json bool
}

func newWorkloadListCmd(s *streams, runF runFunc[workloadFlags]) *cobra.Command {
	if runF == nil {
		runF = s.runList
	}
	var f workloadFlags
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the presets, what each needs and whether it is prepared",
		Example: "  phptune workload list\n  phptune workload list --json",
		Args:    cli.Args(0, 0, ""),
		RunE:    run(func(cmd *cobra.Command, args []string) error { return runF(cmd.Context(), f, args) }),
	}
	cmd.Flags().BoolVar(&f.json, "json", false, "print the list as JSON (schema phptune/workloads/v1)")
	cli.LearnMore(cmd, `docs/workloads.md (the presets, their URLs and services)`)
	return cmd
}

func (s *streams) runList(_ context.Context, f workloadFlags, _ []string) error {
	rows := workload.List()
	if f.json {
		report.WriteJSON(s.out, map[string]any{"schema": "phptune/workloads/v1", "presets": rows})
		return nil
	}
	tw := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPREPARED\tWHAT")
	for i, r := range rows {
		state := "no"
		if r.Prepared {
			state = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, state, r.Summary)
		fmt.Fprintf(tw, "\t\tneeds: %s\n", workload.Presets()[i].Needs())
		if r.Where != "" {
			took := ""
			if w, err := workload.Presets()[i].Open(""); err == nil && w.Dir != "" {
				took = fmt.Sprintf(" (prepared in %.0f s)", w.Manifest.PrepareSeconds)
			}
			fmt.Fprintf(tw, "\t\tin: %s%s\n", r.Where, took)
		}
	}
	tw.Flush()
	fmt.Fprintln(s.out, "\nPrepare one with: phptune workload prepare NAME")
	return nil
}

func newWorkloadPrepareCmd(s *streams, runF runFunc[workloadFlags]) *cobra.Command {
	if runF == nil {
		runF = s.runPrepare
	}
	var f workloadFlags
	cmd := &cobra.Command{
		Use:   "prepare NAME",
		Short: "Install a preset's Debian packages and provision the app, ready to serve and tune by name",
		Long: `Installs the preset's missing Debian packages (apt-get, asking nothing, saying what it installs; a service a
package starts is stopped and disabled again) and provisions the app in DIR (default
$XDG_DATA_HOME/phptune/workloads/NAME): its docroot, configuration, seeded content and any database. A failed
step says which and why and leaves nothing behind or running. Preparing a prepared preset again does nothing.`,
		Example: `  phptune workload prepare dokuwiki
  phptune workload prepare wordpress --dir /srv/phptune/wordpress`,
		Args: cli.Args(1, 1, "NAME, the preset (phptune workload list)"),
		RunE: run(func(cmd *cobra.Command, args []string) error { return runF(cmd.Context(), f, args) }),
	}
	cmd.Flags().StringVar(&f.dir, "dir", "", "`DIR` to provision the app in (default under phptune's data dir)")
	cmd.Flags().BoolVar(&f.json, "json", false, "print the prepared workload as JSON (schema phptune/workload/v1)")
	cli.LearnMore(cmd, `docs/workloads.md (what each preset installs and provisions)`)
	return cmd
}

func (s *streams) runPrepare(ctx context.Context, f workloadFlags, args []string) error {
	p, err := workload.Lookup(args[0])
	if err != nil {
		return err
	}
	log := s.err
	start := time.Now()
	w, already, err := p.Prepare(ctx, f.dir, log)
	if err != nil {
		return err
	}
	if f.json {
		report.WriteJSON(s.out, map[string]any{"schema": "phptune/workload/v1", "name": p.Name, "dir": w.Dir,
			"docroot": w.Docroot(), "front": w.Manifest.Front, "urls": w.Manifest.URLs, "services": w.Manifest.Services,
			"already_prepared": already, "prepare_seconds": w.Manifest.PrepareSeconds})
		return nil
	}
	if already {
		fmt.Fprintf(s.out, "%s is already prepared", p.Name)
		if w.Dir != "" {
			fmt.Fprintf(s.out, " in %s (in %.0f s)", w.Dir, w.Manifest.PrepareSeconds)
		}
		fmt.Fprintln(s.out, ".")
	} else {
		fmt.Fprintf(s.out, "%s prepared in %s (%.0f s).\n", p.Name, w.Dir, time.Since(start).Seconds())
	}
	if w.Dir != "" {
		fmt.Fprintf(s.out, "  docroot   %s (front controller %s)\n", w.Docroot(), w.Manifest.Front)
	}
	for _, u := range w.Manifest.URLs {
		fmt.Fprintf(s.out, "  URL       %-40s weight %d, must contain /%s/\n", u.Path, u.Weight, u.Marker)
	}
	if len(w.Manifest.Services) > 0 {
		fmt.Fprintf(s.out, "  services  %v (started and stopped by serve and tune)\n", w.Manifest.Services)
	}
	ref := p.Name
	if def, err := p.DefaultDir(); w.Dir != "" && (err != nil || def != w.Dir) {
		ref = textline.Quote(w.Dir) // not where the name finds it: the directory names it
	}
	fmt.Fprintf(s.out, "\n  phptune serve %s\n  phptune tune %s\n", ref, ref)
	return nil
}
