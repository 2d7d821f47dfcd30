package rawio

import (
	"io"
	"net"
	"os"
	"syscall"
)

// Socket does a client's request/response I/O on a connection through syscall.RawConn where the system
// allows: the request is written from inside RawConn.Read (see sendWait), so no read is tried before the
// response can have arrived, and nothing allocates per request. Elsewhere it is plain Read and Write.
// It is not safe for concurrent use.
type Socket struct {
	nc net.Conn
	// Method values made once, so that the hot path does not allocate. Nil raw: plain nc.Read and nc.Write.
	raw    syscall.RawConn
	sendFn func(fd uintptr) bool
	recvFn func(fd uintptr) bool
	// BeforeRead, when set, runs on the socket before each read and after the request is written
	// (TCP_QUICKACK, which Linux does not keep).
	BeforeRead func(fd uintptr)
	ioBuf      []byte // bytes still to write, or room to read into, for the callbacks
	n          int    // result of the last recv
	ioErr      error  // syscall error met by a callback
	sent       bool   // sendWait wrote everything and is waiting for readability
}

// NewSocket wraps nc.
func NewSocket(nc net.Conn) (*Socket, error) {
	s := &Socket{nc: nc}
	if sc, ok := nc.(syscall.Conn); ok && Enabled {
		raw, err := sc.SyscallConn()
		if err != nil {
			return nil, err
		}
		s.raw, s.sendFn, s.recvFn = raw, s.sendWait, s.recv
	}
	return s, nil
}

// Send writes p. Unless unread reports bytes of an earlier response still buffered by the caller, it then
// also waits until the response starts to arrive: a read tried straight after the write would nearly always
// fail with EAGAIN, a wasted syscall per request.
func (s *Socket) Send(p []byte, unread bool) error {
	if s.raw == nil || unread {
		_, err := s.nc.Write(p)
		return err
	}
	s.ioBuf, s.sent, s.ioErr = p, false, nil
	err := s.raw.Read(s.sendFn)
	rest := s.ioBuf
	s.ioBuf = nil
	switch {
	case s.ioErr != nil:
		return s.netError("write", s.ioErr)
	case s.sent:
		// An error here (deadline, interrupt, close) is sticky on the socket:
		// the read that follows reports it as before.
		return nil
	case err != nil:
		return s.netError("write", err)
	}
	// The send buffer filled up (a big body): write the rest the ordinary,
	// blocking way, and let the reads wait for the response.
	_, err = s.nc.Write(rest)
	return err
}

// sendWait is called by RawConn.Read, which has already reset the socket's
// readability, so a response arriving after the write below always wakes it.
// It writes s.ioBuf and returns false to wait for readability; called again
// once readable, it returns true, leaving the read to fill.
func (s *Socket) sendWait(fd uintptr) bool {
	if s.sent {
		return true
	}
	n, err := Write(fd, s.ioBuf)
	s.ioBuf = s.ioBuf[n:]
	if err != nil && err != syscall.EAGAIN {
		s.ioErr = os.NewSyscallError("write", err)
		return true
	}
	if len(s.ioBuf) > 0 {
		return true
	}
	if s.BeforeRead != nil {
		s.BeforeRead(fd)
	}
	s.sent = true
	return false
}

// Read is nc.Read through the raw callbacks.
func (s *Socket) Read(p []byte) (int, error) {
	if s.raw == nil {
		return s.nc.Read(p)
	}
	s.ioBuf, s.ioErr = p, nil
	err := s.raw.Read(s.recvFn)
	s.ioBuf = nil
	switch {
	case err != nil:
		return 0, s.netError("read", err)
	case s.ioErr != nil:
		return 0, s.netError("read", s.ioErr)
	case s.n == 0:
		return 0, io.EOF
	}
	return s.n, nil
}

func (s *Socket) recv(fd uintptr) bool {
	if s.BeforeRead != nil {
		s.BeforeRead(fd)
	}
	n, err := Read(fd, s.ioBuf)
	if err == syscall.EAGAIN {
		return false
	}
	s.n = n
	if err != nil {
		s.ioErr = os.NewSyscallError("read", err)
	}
	return true
}

// netError gives errors of the raw path the form the net package gives to
// those of Read and Write ("read tcp A->B: ..."), as they reach reports.
func (s *Socket) netError(op string, err error) error {
	if oe, ok := err.(*net.OpError); ok {
		oe.Op = op // RawConn.Read's "raw-read"; the error is ours alone
		return oe
	}
	la := s.nc.LocalAddr()
	return &net.OpError{Op: op, Net: la.Network(), Source: la, Addr: s.nc.RemoteAddr(), Err: err}
}
