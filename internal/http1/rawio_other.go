//go:build !linux

package http1

const rawIO = false

func writeFD(uintptr, []byte) (int, error) { panic("unreachable") }

func readFD(uintptr, []byte) (int, error) { panic("unreachable") }
