//go:build linux && !amd64

package measure

func archSyscallOf(int) string { return "" }
