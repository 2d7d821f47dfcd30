// Package atomicfile writes a file whole or not at all: through a temporary file beside it (an unpredictable
// name, created 0600) and a rename, so that no reader, and no run that stops half-way, ever sees half a file.
package atomicfile

import (
	"errors"
	"fmt"
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

// Save writes a result or a configuration to share (readable by all) with Write. Its error names the file and the
// system call's own words (no space left on device), without the temporary file's name, and what to do.
func Save(path string, data []byte) error {
	if err := Write(path, data, 0o644); err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("write %s: %w: free space there or give another --out", path, err)
	}
	return nil
}
