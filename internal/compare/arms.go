package compare

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/phptune/phptune/internal/exitcode"
	"github.com/phptune/phptune/internal/textline"
	"github.com/phptune/phptune/internal/tune"
)

// IsTuneResult says whether path holds a tune result (schema phptune/tune/v1); anything unreadable is left to
// the bench reader and its errors.
func IsTuneResult(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var head struct {
		Schema string `json:"schema"`
	}
	return json.Unmarshal(data, &head) == nil && head.Schema == tune.Schema
}

// ReadTuneResult reads a tune result for a comparison.
func ReadTuneResult(path string) (*tune.Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, exitcode.UsageErrorf("read result: %v", err)
	}
	var r tune.Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, exitcode.UsageErrorf("%s: not a phptune result: %v", path, textline.First(err.Error()))
	}
	if r.Schema != tune.Schema {
		return nil, exitcode.UsageErrorf("%s: schema %q: tune results are compared only with tune results (%s)", path, r.Schema, tune.Schema)
	}
	return &r, nil
}

// ArmNames names n arms: A to Z, then arm27 and on.
func ArmNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		if i < 26 {
			names[i] = string(rune('A' + i))
		} else {
			names[i] = fmt.Sprintf("arm%d", i+1)
		}
	}
	return names
}

// SplitWords splits a string as a POSIX shell would into words: whitespace separates, single quotes keep
// everything, double quotes keep all but backslash escapes of " and \, a backslash escapes outside quotes.
func SplitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated ' in %q", s)
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated \" in %q", s)
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
