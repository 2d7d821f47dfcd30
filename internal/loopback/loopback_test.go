package loopback

import (
	"net"
	"strconv"
	"testing"
)

func TestFreePortIsAvailableUntilTaken(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	if port <= 0 || port > 65535 {
		t.Fatalf("FreePort = %d", port)
	}
	// Another process may take it in between; a test machine's kernel does not hand it out again at once.
	if err := Available(port); err != nil {
		t.Fatalf("Available(%d) right after FreePort: %v", port, err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if Available(port) == nil {
		t.Errorf("Available(%d) = nil while a listener holds it", port)
	}
}
