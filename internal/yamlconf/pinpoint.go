package yamlconf

import (
	"bytes"
	"errors"
	"strings"

	goyaml "github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/parser"
)

// PinpointSyntaxError corrects the place of a yaml.v3 syntax error: yaml.v3
// gives a line only, often the line where the enclosing construct starts
// (an indentation mistake is reported on the line above it), and no column.
// A second parser (goccy/go-yaml), whose errors carry the token's line and
// column, is asked where the document breaks: its place wins when it is on
// v3Line or after it; when it is before (that parser stops at the token
// before the one yaml.v3 refuses), v3Line stays, with the column of the
// refused ": " on it for yaml.v3's "mapping values" error. ok is false
// when the second parser finds no syntax error.
func PinpointSyntaxError(data []byte, v3Line int, msg string) (line, col int, ok bool) {
	_, err := parser.ParseBytes(data, 0)
	var se *goyaml.SyntaxError
	if !errors.As(err, &se) || se.Token == nil || se.Token.Position == nil {
		return 0, 0, false
	}
	line, col = se.Token.Position.Line, se.Token.Position.Column
	if line >= v3Line || v3Line == 0 {
		return line, col, true
	}
	if strings.HasPrefix(msg, "mapping values are not allowed") {
		if c := mappingColon(data, v3Line); c > 0 {
			return v3Line, c, true
		}
	}
	return v3Line, 0, true
}

// mappingColon is the 1-based column of the first ": " (or ":" ending the
// line) on line of data, 0 when there is none.
func mappingColon(data []byte, line int) int {
	lines := bytes.Split(data, []byte("\n"))
	if line < 1 || line > len(lines) {
		return 0
	}
	l := string(lines[line-1])
	for i := 0; i < len(l); i++ {
		if l[i] == ':' && (i+1 == len(l) || l[i+1] == ' ') {
			return len([]rune(l[:i])) + 1
		}
	}
	return 0
}
