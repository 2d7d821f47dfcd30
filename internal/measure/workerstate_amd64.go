package measure

import "syscall"

// archSyscallOf names the calls amd64 has beside the generic ones (arm64 has only ppoll, pselect6, epoll_pwait).
func archSyscallOf(n int) string {
	switch n {
	case syscall.SYS_POLL:
		return "poll"
	case syscall.SYS_SELECT:
		return "select"
	case syscall.SYS_EPOLL_WAIT:
		return "epoll_wait"
	}
	return ""
}
