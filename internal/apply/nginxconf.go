package apply

import (
	"fmt"
	"slices"
	"strings"
)

// ngxStmt is one statement of an nginx configuration, with where it is in the text, so that a change replaces
// it or adds beside it and leaves the rest of the file as it is.
type ngxStmt struct {
	name  string
	args  []string
	start int // offset of its name
	end   int // offset after its ; or its block's }
	// block holds a block's statements (nil for a simple one); close is the offset of its }.
	block []ngxStmt
	close int
}

// parseNginx reads an nginx configuration's statements: words, "quoted" or 'quoted' strings, # comments,
// blocks. Enough to find a site's locations and their directives; nginx -t judges the rest.
func parseNginx(text string) ([]ngxStmt, error) {
	p := &ngxParser{s: text}
	stmts, err := p.block(false)
	if err != nil {
		return nil, err
	}
	return stmts, nil
}

type ngxParser struct {
	s string
	i int
}

func (p *ngxParser) block(inner bool) ([]ngxStmt, error) {
	var out []ngxStmt
	for {
		p.space()
		switch {
		case p.i >= len(p.s) && inner:
			return nil, fmt.Errorf("a block is not closed: add its }")
		case p.i >= len(p.s):
			return out, nil
		case p.s[p.i] == '}' && inner:
			return out, nil
		case p.s[p.i] == '}':
			return nil, fmt.Errorf("line %d: a } closes no block: remove it", p.line())
		}
		st, err := p.stmt()
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
}

func (p *ngxParser) stmt() (ngxStmt, error) {
	st := ngxStmt{start: p.i}
	for {
		p.space()
		if p.i >= len(p.s) {
			return st, fmt.Errorf("line %d: %s has no ; at its end: add it", p.line(), st.name)
		}
		switch p.s[p.i] {
		case ';':
			p.i++
			st.end = p.i
			return st, nil
		case '{':
			p.i++
			var err error
			if st.block, err = p.block(true); err != nil {
				return st, err
			}
			if st.block == nil {
				st.block = []ngxStmt{}
			}
			st.close, st.end = p.i, p.i+1
			p.i++
			return st, nil
		}
		w := p.word()
		if st.name == "" {
			st.name = w
		} else {
			st.args = append(st.args, w)
		}
	}
}

// word is a bare word or a quoted string (quotes kept off).
func (p *ngxParser) word() string {
	if q := p.s[p.i]; q == '"' || q == '\'' {
		j := p.i + 1
		for j < len(p.s) && p.s[j] != q {
			if p.s[j] == '\\' {
				j++
			}
			j++
		}
		w := p.s[p.i+1 : min(j, len(p.s))]
		p.i = min(j+1, len(p.s))
		return w
	}
	j := p.i
	for j < len(p.s) && !strings.ContainsRune(" \t\r\n;{}", rune(p.s[j])) {
		j++
	}
	if j == p.i { // a lone } inside a statement: let the caller see it
		j++
	}
	w := p.s[p.i:j]
	p.i = j
	return w
}

// space skips white space and comments.
func (p *ngxParser) space() {
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == '#':
			for p.i < len(p.s) && p.s[p.i] != '\n' {
				p.i++
			}
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			p.i++
		default:
			return
		}
	}
}

func (p *ngxParser) line() int { return strings.Count(p.s[:p.i], "\n") + 1 }

// find are the statements named name in stmts, nested blocks searched too.
func find(stmts []ngxStmt, name string) []ngxStmt {
	var out []ngxStmt
	for _, s := range stmts {
		if s.name == name {
			out = append(out, s)
		}
		out = append(out, find(s.block, name)...)
	}
	return out
}

// get is the statement named name directly in stmts.
func get(stmts []ngxStmt, name string) (ngxStmt, bool) {
	i := slices.IndexFunc(stmts, func(s ngxStmt) bool { return s.name == name })
	if i < 0 {
		return ngxStmt{}, false
	}
	return stmts[i], true
}

// textEdit replaces the text from at to end (at == end: inserts).
type textEdit struct {
	at, end int
	text    string
}

// applyEdits makes the edits, which do not overlap.
func applyEdits(s string, edits []textEdit) string {
	slices.SortFunc(edits, func(a, b textEdit) int { return b.at - a.at })
	for _, e := range edits {
		s = s[:e.at] + e.text + s[e.end:]
	}
	return s
}

// indentAt is the white space that starts the line offset at is on.
func indentAt(s string, at int) string {
	line := s[strings.LastIndexByte(s[:at], '\n')+1 : at]
	return line[:len(line)-len(strings.TrimLeft(line, " \t"))]
}
