package fcgi

import "syscall"

const quickAckSupported = true

// setQuickAck is a top-level function rather than a closure so that passing
// it to RawConn.Control on every read allocates nothing.
func setQuickAck(fd uintptr) {
	_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_QUICKACK, 1)
}
