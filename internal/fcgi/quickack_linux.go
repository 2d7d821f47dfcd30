package fcgi

import (
	"syscall"
	"unsafe"
)

const quickAckSupported = true

var one int32 = 1

// setQuickAck sets TCP_QUICKACK with a raw syscall, like readFD (rawio_linux.go).
func setQuickAck(fd uintptr) {
	_, _, _ = syscall.RawSyscall6(syscall.SYS_SETSOCKOPT, fd, syscall.IPPROTO_TCP, syscall.TCP_QUICKACK,
		uintptr(unsafe.Pointer(&one)), unsafe.Sizeof(one), 0)
}
