// Package workloads holds the applications phptune ships, embedded so the binary works from any directory.
package workloads

import (
	"embed"
	"io/fs"
)

//go:embed all:demo
var files embed.FS

// Demo is the bundled demo application: a docroot with the front controller index.php.
func Demo() fs.FS {
	sub, err := fs.Sub(files, "demo")
	if err != nil {
		// fs.Sub fails only on an invalid path, which "demo" is not.
		panic(err)
	}
	return sub
}
