// Package atomicfile writes a file whole or not at all: through a temporary file beside it (an unpredictable
// name, created 0600) and a rename, so that no reader, and no run that stops half-way, ever sees half a file.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write writes data to path with mode perm. On an error path is as it was and no temporary file is left.
func Write(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".phptune-*")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	done = true
	return nil
}
