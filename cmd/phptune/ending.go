package main

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"path/filepath"

	"github.com/phptune/phptune/internal/atomicfile"
	"github.com/phptune/phptune/internal/report"
)

// ending is how every command that measured something finishes: its result encoded once (figures that are not
// numbers saved as 0), written whole into dir beside its report pages, then the JSON or the terminal summary
// on stdout. The command returns its run's error after it, so that an interrupted run keeps what it measured
// and still exits 130.
type ending struct {
	out  io.Writer // stdout
	dir  string    // "": nothing written
	name string    // the result's file in dir (default result.json)
	json bool      // --json: the result on stdout instead of the summary
	// page renders the page written beside the result, pageName (default report.html); nil: none.
	page     func(w io.Writer) error
	pageName string
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
		if err := atomicfile.Save(filepath.Join(e.dir, name), buf.Bytes()); err != nil {
			return err
		}
		if e.page != nil {
			if err := savePage(filepath.Join(e.dir, cmp.Or(e.pageName, "report.html")), e.page); err != nil {
				return err
			}
		}
	}
	if e.json {
		_, err := e.out.Write(buf.Bytes())
		return err
	}
	e.text(e.out)
	switch {
	case e.dir != "" && e.holds != "":
		fmt.Fprintln(e.out)
		report.Line(e.out, "  ", "    ", fmt.Sprintf("Results in %s: %s", e.dir, e.holds))
	case e.dir != "":
		fmt.Fprintln(e.out)
		report.Line(e.out, "  ", "    ", "result: "+filepath.Join(e.dir, name))
	}
	return nil
}

// savePage renders a page and writes it whole to path.
func savePage(path string, render func(w io.Writer) error) error {
	var page bytes.Buffer
	if err := render(&page); err != nil {
		return err
	}
	return atomicfile.Save(path, page.Bytes())
}
