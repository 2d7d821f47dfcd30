//go:build linux

// Package rawio reads and writes non-blocking sockets with raw system calls, for the clients' hot paths.
package rawio

import (
	"syscall"
	"unsafe"
)

// Enabled says the raw calls exist on this system.
const Enabled = true

// Write and Read make the syscall without telling the scheduler
// (RawSyscall): on a non-blocking socket it cannot block, and skipping
// entersyscall/exitsyscall saves their cost and the wake-ups of sysmon that
// entersyscall does when the process was idle. They retry on EINTR.
func Write(fd uintptr, p []byte) (int, error) { return raw(syscall.SYS_WRITE, fd, p) }

func Read(fd uintptr, p []byte) (int, error) { return raw(syscall.SYS_READ, fd, p) }

// raw makes the read or write system call trap on fd and p.
func raw(trap, fd uintptr, p []byte) (int, error) {
	for {
		n, _, e := syscall.RawSyscall(trap, fd, uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
		switch e {
		case 0:
			return int(n), nil
		case syscall.EINTR:
			continue
		}
		return 0, e
	}
}
