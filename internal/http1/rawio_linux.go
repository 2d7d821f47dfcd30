package http1

import (
	"syscall"
	"unsafe"
)

const rawIO = true

// writeFD and readFD make the syscall without telling the scheduler
// (RawSyscall): on a non-blocking socket it cannot block, and skipping
// entersyscall/exitsyscall saves their cost and the wake-ups of sysmon that
// entersyscall does when the process was idle. They retry on EINTR.
func writeFD(fd uintptr, p []byte) (int, error) {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
		switch e {
		case 0:
			return int(n), nil
		case syscall.EINTR:
			continue
		}
		return 0, e
	}
}

func readFD(fd uintptr, p []byte) (int, error) {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
		switch e {
		case 0:
			return int(n), nil
		case syscall.EINTR:
			continue
		}
		return 0, e
	}
}
