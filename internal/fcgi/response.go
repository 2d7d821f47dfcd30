package fcgi

import "bytes"

// DefaultStderrKeep is how many leading bytes of FCGI_STDERR a Response keeps
// in Stderr; the rest is only counted.
const DefaultStderrKeep = 4 << 10

// lineKeep bytes of a header line are enough to recognise and parse "Status:".
const lineKeep = 32

// Response is filled by Do and reused across calls; Do resets it. Once its
// buffers have grown it allocates nothing per request.
type Response struct {
	Status         int    // from the CGI "Status:" header of stdout; 200 when absent
	HeaderBytes    int64  // bytes of the CGI header block, blank line included
	BodyBytes      int64  // stdout bytes after the header block
	StderrBytes    int64  // bytes written to FCGI_STDERR (PHP warnings, notices)
	AppStatus      uint32 // from END_REQUEST
	ProtocolStatus uint8  // from END_REQUEST; StatusRequestComplete (0) when complete
	KeepBody       bool   // set by the caller: keep the body in Body instead of discarding it
	Body           []byte // the body when KeepBody is set (reused buffer)
	Stderr         []byte // the first DefaultStderrKeep bytes of stderr (reused buffer)

	stderrKeep int  // overrides DefaultStderrKeep when > 0 (Get keeps more)
	inBody     bool // the header block has ended
	lineLen    int  // length of the header line being read
	line       [lineKeep]byte
}

func (r *Response) reset() {
	r.Status = 200
	r.HeaderBytes, r.BodyBytes, r.StderrBytes = 0, 0, 0
	r.AppStatus, r.ProtocolStatus = 0, 0
	r.Body = r.Body[:0]
	r.Stderr = r.Stderr[:0]
	r.inBody = false
	r.lineLen = 0
}

// stdout consumes one piece of the FCGI_STDOUT stream, which may split the
// header block anywhere.
func (r *Response) stdout(p []byte) {
	if !r.inBody {
		n := r.header(p)
		r.HeaderBytes += int64(n)
		p = p[n:]
	}
	if len(p) == 0 {
		return
	}
	r.BodyBytes += int64(len(p))
	if r.KeepBody {
		r.Body = append(r.Body, p...)
	}
}

// header consumes header bytes from p up to and including the blank line
// that ends the header block, and returns how many it consumed. Lines may end
// in "\r\n" or "\n". Stdout that never ends the block counts as all header.
func (r *Response) header(p []byte) int {
	used := 0
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			r.addToLine(p)
			return used + len(p)
		}
		r.addToLine(p[:i])
		used += i + 1
		p = p[i+1:]
		if r.lineLen == 0 || (r.lineLen == 1 && r.line[0] == '\r') {
			r.inBody = true
			return used
		}
		r.endLine()
		r.lineLen = 0
	}
	return used
}

func (r *Response) addToLine(p []byte) {
	if r.lineLen < lineKeep {
		copy(r.line[r.lineLen:], p)
	}
	r.lineLen += len(p)
}

var statusPrefix = []byte("status:")

// endLine parses a completed header line if it is "Status: NNN ...".
func (r *Response) endLine() {
	line := r.line[:min(r.lineLen, lineKeep)]
	if len(line) < len(statusPrefix) || !bytes.EqualFold(line[:len(statusPrefix)], statusPrefix) {
		return
	}
	line = line[len(statusPrefix):]
	for len(line) > 0 && (line[0] == ' ' || line[0] == '\t') {
		line = line[1:]
	}
	code, digits := 0, 0
	for digits < len(line) && digits < 3 && line[digits] >= '0' && line[digits] <= '9' {
		code = code*10 + int(line[digits]-'0')
		digits++
	}
	// A malformed status is left at the default rather than failing the
	// request: the load generator only classifies responses.
	if digits == 3 && code >= 100 && (len(line) == 3 || line[3] == ' ' || line[3] == '\r') {
		r.Status = code
	}
}

func (r *Response) stderr(p []byte) {
	r.StderrBytes += int64(len(p))
	keep := r.stderrKeep
	if keep <= 0 {
		keep = DefaultStderrKeep
	}
	if room := keep - len(r.Stderr); room > 0 {
		r.Stderr = append(r.Stderr, p[:min(room, len(p))]...)
	}
}
