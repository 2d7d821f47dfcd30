//go:build !linux

package fcgi

// TCP_QUICKACK is Linux-only; elsewhere the client reads without it.
const quickAckSupported = false

func setQuickAck(uintptr) {}
