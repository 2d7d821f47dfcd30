package accesslog

import (
	"fmt"
	"strings"
)

// fieldKind says what a pattern field feeds; fields not read are fSkip and only matched.
type fieldKind uint8

const (
	fSkip     fieldKind = iota
	fRequest            // "METHOD URI PROTO"
	fMethod             // nginx $request_method, Apache %m
	fURI                // path and query as requested: nginx $request_uri, Apache %U%q
	fPath               // path only: nginx $uri, Apache %U
	fArgs               // query: nginx $args ("-" when none), Apache %q ("?..." or "")
	fIsArgs             // nginx $is_args, only meaningful glued to $uri and $args
	fStatus             // response status
	fSeconds            // request time in seconds
	fMillis             // request time in milliseconds
	fMicros             // request time in microseconds
	fUpstream           // upstream time in seconds, possibly a list: a fallback request time
)

// token is one piece of a compiled pattern: literal text, or a field running up to the next literal.
type token struct {
	lit     []byte // literal text; nil for a field
	kind    fieldKind
	bracket bool // the value is "[...]" (Apache %t) and may itself hold the next literal
	dash    bool // a glued nginx $uri$is_args$args: a trailing "-" is the empty $args
	// times are the layouts a time stamp field is read with, in order (nil: not a time, or one not read).
	times []*timeLayout
}

// format is a compiled log format.
type format struct {
	name string
	toks []token
	// tail marks the built-in formats: their last field ends at a space and what follows may carry a
	// request time by one of the conventions in the package doc.
	tail bool
}

// Built-in formats, tried by auto-detect. The prefix field swallows "$remote_addr - $remote_user"
// or any other leading fields up to the bracketed time.
var (
	combinedFormat = mustBuiltin("combined",
		`$prefix [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"`)
	commonFormat = mustBuiltin("common", `$prefix [$time_local] "$request" $status $body_bytes_sent`)
)

func mustBuiltin(name, pattern string) *format {
	toks, err := compileNginx(pattern)
	if err != nil {
		panic(err)
	}
	return &format{name: name, toks: toks, tail: true}
}

// nginxFields maps the nginx variables that are read; others are skipped.
var nginxFields = map[string]fieldKind{
	"request": fRequest, "request_method": fMethod, "request_uri": fURI,
	"uri": fPath, "document_uri": fPath, "args": fArgs, "query_string": fArgs, "is_args": fIsArgs,
	"status": fStatus, "request_time": fSeconds, "upstream_response_time": fUpstream,
}

// compileFormat compiles a user pattern: nginx if it holds a $variable, else Apache if it holds a
// %directive (the package doc lists the fields read).
func compileFormat(p string) (*format, error) {
	p = fromConfig(p)
	var toks []token
	var err error
	switch {
	case hasNginxVar(p):
		toks, err = compileNginx(p)
	case strings.Contains(p, "%"):
		toks, err = compileApache(p)
	default:
		return nil, fmt.Errorf("log format %q has no $variable (nginx) or %%directive (Apache)", p)
	}
	if err != nil {
		return nil, fmt.Errorf("log format %q: %w", p, err)
	}
	if !hasKind(toks, fRequest, fURI, fPath) {
		return nil, fmt.Errorf("log format %q has no request URI: give $request, $request_uri or $uri (nginx), %%r or %%U (Apache)", p)
	}
	return &format{name: p, toks: toks}, nil
}

// fromConfig takes a format as pasted from a config file: nginx's `log_format NAME [escape=...] '...' '...';`
// (its quoted pieces joined) or Apache's `LogFormat "..." NAME` (the quoted string); anything else as it is.
func fromConfig(p string) string {
	p = strings.TrimSpace(p)
	switch f := strings.Fields(p); {
	case len(f) > 2 && f[0] == "log_format":
		var b strings.Builder
		for rest := p; ; {
			i := strings.IndexByte(rest, '\'')
			if i < 0 {
				break
			}
			j := strings.IndexByte(rest[i+1:], '\'')
			if j < 0 {
				break
			}
			b.WriteString(rest[i+1 : i+1+j])
			rest = rest[i+j+2:]
		}
		if b.Len() > 0 {
			return b.String()
		}
	case len(f) > 1 && f[0] == "LogFormat":
		rest := strings.TrimSpace(strings.TrimPrefix(p, "LogFormat"))
		if strings.HasPrefix(rest, `"`) {
			for i := 1; i < len(rest); i++ {
				if rest[i] == '\\' {
					i++
				} else if rest[i] == '"' {
					return rest[:i+1] // quoted: the Apache compiler takes the quotes off
				}
			}
		}
	}
	return p
}

func hasKind(toks []token, kinds ...fieldKind) bool {
	for _, t := range toks {
		for _, k := range kinds {
			if t.lit == nil && t.kind == k {
				return true
			}
		}
	}
	return false
}

func hasNginxVar(p string) bool {
	for i := 0; i+1 < len(p); i++ {
		if p[i] == '$' && (p[i+1] == '{' || isVarChar(p[i+1])) {
			return true
		}
	}
	return false
}

func isVarChar(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// builder collects tokens, joining literal text and gluing fields.
type builder struct {
	toks []token
	lit  []byte
}

func (b *builder) text(s string) { b.lit = append(b.lit, s...) }

func (b *builder) field(t token) {
	if len(b.lit) > 0 {
		b.toks = append(b.toks, token{lit: b.lit})
		b.lit = nil
	}
	b.toks = append(b.toks, t)
}

func (b *builder) done() ([]token, error) {
	if len(b.lit) > 0 {
		b.toks = append(b.toks, token{lit: b.lit})
	}
	return glue(b.toks)
}

// glue merges fields written back to back: $uri$is_args$args and %U%q become one URI field; any other
// pair has no text to tell where the first ends.
func glue(toks []token) ([]token, error) {
	var out []token
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		j := i + 1
		for j < len(toks) && toks[j].lit == nil {
			j++
		}
		if j == i+1 || t.lit != nil {
			out = append(out, t)
			continue
		}
		if !gluable(toks[i:j]) {
			return nil, fmt.Errorf("two fields with no text between them cannot be told apart")
		}
		out = append(out, token{kind: fURI, dash: hasKind(toks[i:j], fIsArgs)})
		i = j - 1
	}
	return out, nil
}

func gluable(run []token) bool {
	if run[0].kind != fPath {
		return false
	}
	for _, t := range run[1:] {
		if t.kind != fArgs && t.kind != fIsArgs {
			return false
		}
	}
	return true
}

func compileNginx(p string) ([]token, error) {
	var b builder
	for i := 0; i < len(p); {
		name, n := nginxVar(p[i:])
		if n == 0 {
			b.text(p[i : i+1])
			i++
			continue
		}
		b.field(token{kind: nginxFields[name], times: nginxTimes[name]})
		i += n
	}
	return b.done()
}

// nginxVar reads "$name" or "${name}" at the start of s; n is 0 when there is none.
func nginxVar(s string) (name string, n int) {
	if len(s) < 2 || s[0] != '$' {
		return "", 0
	}
	if s[1] == '{' {
		end := strings.IndexByte(s, '}')
		if end < 3 {
			return "", 0
		}
		return s[2:end], end + 1
	}
	n = 1
	for n < len(s) && isVarChar(s[n]) {
		n++
	}
	if n == 1 {
		return "", 0
	}
	return s[1:n], n
}

func compileApache(p string) ([]token, error) {
	p = unquoteApache(p)
	var b builder
	for i := 0; i < len(p); {
		if p[i] != '%' {
			b.text(p[i : i+1])
			i++
			continue
		}
		if i+1 < len(p) && p[i+1] == '%' {
			b.text("%")
			i += 2
			continue
		}
		t, n, err := apacheDirective(p[i:])
		if err != nil {
			return nil, err
		}
		b.field(t)
		i += n
	}
	return b.done()
}

// apacheDirective reads one "%[<>][!codes][{arg}]X" at the start of s.
func apacheDirective(s string) (token, int, error) {
	j := 1
	for j < len(s) && strings.IndexByte("<>!,0123456789", s[j]) >= 0 {
		j++
	}
	arg := ""
	if j < len(s) && s[j] == '{' {
		end := strings.IndexByte(s[j:], '}')
		if end < 0 {
			return token{}, 0, fmt.Errorf("unclosed { in %q", s)
		}
		arg = s[j+1 : j+end]
		j += end + 1
	}
	if j >= len(s) {
		return token{}, 0, fmt.Errorf("incomplete %% directive at the end")
	}
	return apacheToken(s[j], arg), j + 1, nil
}

func apacheToken(d byte, arg string) token {
	switch d {
	case 'r':
		return token{kind: fRequest}
	case 'm':
		return token{kind: fMethod}
	case 'U':
		return token{kind: fPath}
	case 'q':
		return token{kind: fArgs}
	case 's':
		return token{kind: fStatus}
	case 'D':
		return token{kind: fMicros}
	case 'T':
		switch arg {
		case "", "s":
			return token{kind: fSeconds}
		case "ms":
			return token{kind: fMillis}
		case "us":
			return token{kind: fMicros}
		}
	case 't':
		t := token{bracket: arg == ""}
		if l, ok := apacheTime(arg); ok {
			t.times = []*timeLayout{l}
		}
		return t
	}
	return token{kind: fSkip}
}

// unquoteApache undoes the quoting of a LogFormat string as written in the Apache config, so
// "\"%r\"" and "%r" both mean the request line between quotes.
func unquoteApache(p string) string {
	if len(p) >= 2 && p[0] == '"' && p[len(p)-1] == '"' && p[len(p)-2] != '\\' {
		p = p[1 : len(p)-1]
	}
	if !strings.Contains(p, `\`) {
		return p
	}
	return strings.NewReplacer(`\"`, `"`, `\\`, `\`, `\t`, "\t").Replace(p)
}
