package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/phptune/phptune/internal/apply"
	"github.com/phptune/phptune/internal/knob"
	"github.com/phptune/phptune/internal/stack"
	"github.com/phptune/phptune/internal/tune"
)

// withServer puts the server knob among tune's knobs, first of those decided on goodput (before pm): which
// runtime serves the app frames every knob after it. It is skipped, with what to install, when Apache or mod_php
// for fpmBin's PHP is missing.
func withServer(ks []knob.Knob, fpmBin string) []knob.Knob {
	k := knob.Server(apacheMissing(fpmBin))
	for i, x := range ks {
		if x.Name == knob.PM().Name {
			return append(ks[:i:i], append([]knob.Knob{k}, ks[i:]...)...)
		}
	}
	return append(ks, k)
}

// apacheMissing says why Apache's runtimes cannot run here ("" = they can): apache2 or mod_php for the PHP of
// php-fpm fpmBin is not installed, or that PHP is not Debian's (mod_php runs Debian's).
func apacheMissing(fpmBin string) string {
	if _, err := stack.FindApache(""); err != nil {
		return "apache2 is not installed (apt-get install apache2 libapache2-mod-php8.2 to race Apache's runtimes)"
	}
	bin, err := stack.FindPHPFPM(fpmBin)
	if err != nil {
		return err.Error()
	}
	if _, err := stack.ModPHP(bin); err != nil {
		return err.Error()
	}
	return ""
}

// needsApache checks, before anything starts, that a run whose starting point or --knob names an Apache runtime
// can start it: exit 2 with what to install when it cannot.
func needsApache(o tune.Options, named []string) error {
	servers := append([]string{o.Base.ServerName()}, named...)
	for _, s := range servers {
		if s != knob.ApacheFPM && s != knob.ApacheModPHP {
			continue
		}
		if _, err := stack.FindApache(o.Stack.Apache); err != nil {
			return err
		}
		if s == knob.ApacheModPHP {
			bin, err := stack.FindPHPFPM(o.Stack.PHPFPM)
			if err != nil {
				return err
			}
			if _, err := stack.ModPHP(bin); err != nil {
				return err
			}
		}
	}
	return nil
}

// namedServers are the runtimes --knob server=... names.
func namedServers(knobs []string) []string {
	var out []string
	for _, kv := range knobs {
		if name, vals, ok := strings.Cut(kv, "="); ok && name == knob.ServerName {
			out = append(out, strings.Split(vals, ",")...)
		}
	}
	return out
}

// checkApacheFiles runs apache2 -t on an Apache recommendation's site and MPM file, with the modules they need.
func checkApacheFiles(ctx context.Context, rec knob.Config, files map[string]string, sc stack.Config) error {
	site, ok := files[apply.SiteName]
	if !ok {
		return nil
	}
	bin, err := stack.FindApache(sc.Apache)
	if err != nil {
		return err
	}
	if err := stack.CheckApacheSite(ctx, bin, rec.Server == knob.ApacheModPHP, site, files[apply.MPMName]); err != nil {
		return fmt.Errorf("generated Apache site: %w", err)
	}
	return nil
}

// fileNames lists the files a run wrote, for its last words.
func fileNames(files map[string]string) string {
	var names []string
	for _, n := range []string{apply.PoolName, apply.ININame, apply.NginxName, apply.SiteName, apply.MPMName, apply.DiffName, applyName} {
		if _, ok := files[n]; ok {
			names = append(names, n)
		}
	}
	return strings.Join(names, ", ")
}
