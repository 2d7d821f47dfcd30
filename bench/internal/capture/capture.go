// Package capture reads what a bench main prints, for its tests: the mains print their reports to os.Stdout.
package capture

import (
	"io"
	"os"
	"testing"
)

// Stdout is what f writes to os.Stdout; os.Stdout is restored after f, however f ends.
func Stdout(t testing.TB, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() { // read as f writes: a report longer than the pipe's buffer would block f
		b, _ := io.ReadAll(r)
		r.Close()
		got <- string(b)
	}()
	saved := os.Stdout
	os.Stdout = w
	func() {
		defer func() {
			os.Stdout = saved
			w.Close()
		}()
		f()
	}()
	return <-got
}
