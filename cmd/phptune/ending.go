package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/phptune/phptune/internal/report"
)

// ending is how every command that measured something finishes: its result encoded once (figures that are not
// numbers saved as 0), written whole into dir beside its report pages, then the JSON or the terminal summary
// on stdout. The command returns its run's error after it, so that an interrupted run keeps what it measured
// and still exits 130.
type ending struct {
	dir  string // "": nothing written
	name string // the result's file in dir (default result.json)
	json bool   // --json: the result on stdout instead of the summary
	// pages writes the report pages beside the result (report.html, chart.html); nil: none.
	pages func(dir string) error
	// text writes the terminal summary.
	text func(w io.Writer)
	// holds names what dir holds, said after the summary ("report.html, result.json"); "": the result's path.
	holds string
}

func (e ending) finish(result any) error {
	var buf bytes.Buffer
	if err := report.WriteJSON(&buf, result); err != nil {
		return fmt.Errorf("encode the result: %w", err)
	}
	name := e.name
	if name == "" {
		name = "result.json"
	}
	if e.dir != "" {
		if err := writeAtomic(filepath.Join(e.dir, name), buf.Bytes()); err != nil {
			return err
		}
		if e.pages != nil {
			if err := e.pages(e.dir); err != nil {
				return err
			}
		}
	}
	if e.json {
		_, err := os.Stdout.Write(buf.Bytes())
		return err
	}
	e.text(os.Stdout)
	switch {
	case e.dir != "" && e.holds != "":
		fmt.Println()
		report.Line(os.Stdout, "  ", "    ", fmt.Sprintf("Results in %s: %s", e.dir, e.holds))
	case e.dir != "":
		fmt.Println()
		report.Line(os.Stdout, "  ", "    ", "result: "+filepath.Join(e.dir, name))
	}
	return nil
}
