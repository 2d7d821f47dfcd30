package http1

import "fmt"

// header holds what the client needs from one response header block.
type header struct {
	status        int
	minor         int   // HTTP/1.minor
	contentLength int64 // -1 when absent
	te            bool  // Transfer-Encoding present
	chunked       bool  // final transfer coding is chunked
	connClose     bool
	connKeepAlive bool
}

// parseStatusLine accepts "HTTP/1.x DDD[ reason]".
func parseStatusLine(line []byte, h *header) error {
	if len(line) < 12 || string(line[:7]) != "HTTP/1." || !isDigit(line[7]) || line[8] != ' ' ||
		!isDigit(line[9]) || !isDigit(line[10]) || !isDigit(line[11]) || (len(line) > 12 && line[12] != ' ') {
		return fmt.Errorf("%w: malformed status line %q", ErrProtocol, clip(line))
	}
	h.minor = int(line[7] - '0')
	h.status = int(line[9]-'0')*100 + int(line[10]-'0')*10 + int(line[11]-'0')
	if h.status < 100 {
		return fmt.Errorf("%w: malformed status line %q", ErrProtocol, clip(line))
	}
	return nil
}

// parseField records the header fields that decide framing and reuse; all
// others are only counted.
func parseField(line []byte, h *header) error {
	if line[0] == ' ' || line[0] == '\t' {
		// Obsolete line folding continues the previous field; none of the
		// fields we interpret are folded in practice, so it is skipped.
		return nil
	}
	colon := -1
	for i, c := range line {
		if c == ':' {
			colon = i
			break
		}
		if c <= ' ' || c == 0x7f {
			// RFC 9112 5.1: whitespace between name and colon must be rejected.
			return fmt.Errorf("%w: malformed header field %q", ErrProtocol, clip(line))
		}
	}
	if colon <= 0 {
		return fmt.Errorf("%w: malformed header field %q", ErrProtocol, clip(line))
	}
	name, value := line[:colon], trimOWS(line[colon+1:])
	switch {
	case equalFold(name, "content-length"):
		n, ok := parseDecimal(value)
		if !ok || (h.contentLength >= 0 && h.contentLength != n) {
			return fmt.Errorf("%w: bad Content-Length %q", ErrProtocol, clip(value))
		}
		h.contentLength = n
	case equalFold(name, "transfer-encoding"):
		h.te = true
		h.chunked = lastTokenIs(value, "chunked")
	case equalFold(name, "connection"):
		h.connClose = h.connClose || hasToken(value, "close")
		h.connKeepAlive = h.connKeepAlive || hasToken(value, "keep-alive")
	}
	return nil
}

// parseChunkSize parses "hex[ BWS ; ext...]".
func parseChunkSize(line []byte) (int64, bool) {
	var n int64
	i := 0
	for ; i < len(line); i++ {
		d := hexValue(line[i])
		if d < 0 {
			break
		}
		if n > (1<<62)>>4 {
			return 0, false
		}
		n = n<<4 | int64(d)
	}
	if i == 0 {
		return 0, false
	}
	for ; i < len(line) && (line[i] == ' ' || line[i] == '\t'); i++ {
	}
	if i < len(line) && line[i] != ';' {
		return 0, false
	}
	return n, true
}

func parseDecimal(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if !isDigit(c) || n > (1<<62)/10 {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func hexValue(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// equalFold compares b with lower-case ASCII s without allocating.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// hasToken reports whether the comma-separated list v contains token
// (lower-case), case-insensitively.
func hasToken(v []byte, token string) bool {
	for len(v) > 0 {
		i := 0
		for i < len(v) && v[i] != ',' {
			i++
		}
		if equalFold(trimOWS(v[:i]), token) {
			return true
		}
		if i == len(v) {
			break
		}
		v = v[i+1:]
	}
	return false
}

// lastTokenIs reports whether the last element of the list v is token.
func lastTokenIs(v []byte, token string) bool {
	for i := len(v) - 1; i >= 0; i-- {
		if v[i] == ',' {
			v = v[i+1:]
			break
		}
	}
	return equalFold(trimOWS(v), token)
}

// clip bounds the size of protocol data quoted in error messages.
func clip(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}
