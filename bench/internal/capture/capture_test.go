package capture

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// What f prints comes back whole, a report longer than a pipe's buffer too, and os.Stdout is itself again after.
func TestStdout(t *testing.T) {
	saved := os.Stdout
	line := strings.Repeat("x", 99) + "\n"
	got := Stdout(t, func() {
		fmt.Print("first\n")
		for range 2000 { // 200 kB: beyond a pipe's 64 KiB
			fmt.Print(line)
		}
	})
	if os.Stdout != saved {
		t.Fatal("os.Stdout was not restored")
	}
	if want := "first\n" + strings.Repeat(line, 2000); got != want {
		t.Errorf("captured %d bytes, want %d; starts %.20q", len(got), len(want), got)
	}
	if got := Stdout(t, func() {}); got != "" {
		t.Errorf("nothing printed, captured %q", got)
	}
}

// A panic in f leaves os.Stdout restored.
func TestStdoutRestoredAfterPanic(t *testing.T) {
	saved := os.Stdout
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic did not reach the caller")
			}
		}()
		Stdout(t, func() { panic("boom") })
	}()
	if os.Stdout != saved {
		t.Fatal("os.Stdout was not restored after a panic")
	}
}
