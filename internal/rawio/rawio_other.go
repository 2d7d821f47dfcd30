//go:build !linux

// Package rawio reads and writes non-blocking sockets with raw system calls, for the clients' hot paths.
package rawio

// Enabled says the raw calls exist on this system.
const Enabled = false

// Write is never called where Enabled is false.
func Write(uintptr, []byte) (int, error) { panic("rawio: not supported on this system") }

// Read is never called where Enabled is false.
func Read(uintptr, []byte) (int, error) { panic("rawio: not supported on this system") }
