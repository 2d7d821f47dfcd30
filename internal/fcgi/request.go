package fcgi

import "encoding/binary"

// Param is one CGI parameter.
type Param struct{ Name, Value string }

// Request is an immutable, pre-encoded FastCGI request: BEGIN_REQUEST with
// FCGI_KEEP_CONN, PARAMS records, an empty PARAMS, STDIN records carrying the
// body and an empty STDIN. It is safe to share between goroutines and
// connections.
type Request struct {
	wire []byte
}

// NewRequest encodes params and body. Each name-value pair is kept whole
// inside one PARAMS record because php-fpm parses every PARAMS record on its
// own; a pair too big for one record (about 64 KiB) is therefore truncated.
func NewRequest(params []Param, body []byte) *Request {
	size := 2*headerLen + 8 + 2*headerLen
	for _, p := range params {
		size += pairSize(p.Name, p.Value) + 8
	}
	size += len(body) + (len(body)/maxContent+2)*(headerLen+8)
	b := make([]byte, 0, size)

	b = appendRecord(b, typeBeginRequest, []byte{0, roleResponder, flagKeepConn, 0, 0, 0, 0, 0})

	start := -1 // offset of the open PARAMS record's header, -1 when none
	for _, p := range params {
		name, value := clampPair(p.Name, p.Value)
		n := pairSize(name, value)
		if start >= 0 && len(b)-start-headerLen+n > maxContent {
			b = closeRecord(b, start)
			start = -1
		}
		if start < 0 {
			start = len(b)
			b = append(b, make([]byte, headerLen)...)
		}
		b = appendPair(b, name, value)
	}
	if start >= 0 {
		b = closeRecord(b, start)
	}
	b = appendRecord(b, typeParams, nil)

	for len(body) > 0 {
		k := min(len(body), maxContent)
		b = appendRecord(b, typeStdin, body[:k])
		body = body[k:]
	}
	b = appendRecord(b, typeStdin, nil)
	return &Request{wire: b}
}

// Size reports how many bytes the request puts on the wire.
func (r *Request) Size() int { return len(r.wire) }

func pad(n int) int { return -n & 7 }

func putHeader(h []byte, typ uint8, contentLen int) {
	h[0] = version1
	h[1] = typ
	binary.BigEndian.PutUint16(h[2:], requestID)
	binary.BigEndian.PutUint16(h[4:], uint16(contentLen))
	h[6] = uint8(pad(contentLen))
	h[7] = 0
}

func appendRecord(b []byte, typ uint8, content []byte) []byte {
	var h [headerLen]byte
	putHeader(h[:], typ, len(content))
	b = append(b, h[:]...)
	b = append(b, content...)
	var zero [8]byte
	return append(b, zero[:pad(len(content))]...)
}

// closeRecord fills in the header of the PARAMS record at start, whose
// content runs to the end of b, and pads it.
func closeRecord(b []byte, start int) []byte {
	n := len(b) - start - headerLen
	putHeader(b[start:], typeParams, n)
	var zero [8]byte
	return append(b, zero[:pad(n)]...)
}

func lenSize(n int) int {
	if n < 128 {
		return 1
	}
	return 4
}

func pairSize(name, value string) int {
	return lenSize(len(name)) + lenSize(len(value)) + len(name) + len(value)
}

func clampPair(name, value string) (string, string) {
	const limit = maxContent - 8 // room for two 4-byte lengths
	if len(name) > limit {
		name = name[:limit]
	}
	if len(name)+len(value) > limit {
		value = value[:limit-len(name)]
	}
	return name, value
}

func appendLen(b []byte, n int) []byte {
	if n < 128 {
		return append(b, byte(n))
	}
	return binary.BigEndian.AppendUint32(b, uint32(n)|1<<31)
}

func appendPair(b []byte, name, value string) []byte {
	b = appendLen(b, len(name))
	b = appendLen(b, len(value))
	b = append(b, name...)
	return append(b, value...)
}
