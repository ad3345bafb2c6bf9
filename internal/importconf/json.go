package importconf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// jsonTree parses JSON into yaml.Nodes that carry each value's and key's
// line and column, so the mapping can report positions (yaml.v3 itself
// cannot be trusted with JSON: it refuses surrogate-pair escapes). Comments
// (// and /* */, as Gemini CLI and VS Code allow) are blanked first, which
// keeps every position.
func jsonTree(filename string, data []byte) (*yaml.Node, error) {
	data = blankComments(bytes.TrimPrefix(data, []byte("\uFEFF")))
	p := &jsonParser{data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	p.dec.UseNumber()
	n, err := p.value()
	if err == nil {
		if _, line, col, extra := p.next(); extra != io.EOF {
			return nil, fmt.Errorf("%s:%d:%d: invalid JSON: more than one JSON value", filename, line, col)
		}
	}
	if err != nil {
		line, col := p.position(p.dec.InputOffset())
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col = p.position(se.Offset)
		}
		return nil, fmt.Errorf("%s:%d:%d: invalid JSON: %v", filename, line, col, err)
	}
	return n, nil
}

type jsonParser struct {
	data []byte
	dec  *json.Decoder
}

// position is the line and column (in characters) of byte offset off.
func (p *jsonParser) position(off int64) (line, col int) {
	before := p.data[:min(int(off), len(p.data))]
	line = bytes.Count(before, []byte("\n")) + 1
	col = utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:]) + 1
	return line, col
}

// next reads a token and returns it with its start position: the decoder's
// offset is the end of the previous token, before blanks, ':' and ','.
func (p *jsonParser) next() (json.Token, int, int, error) {
	off := int(p.dec.InputOffset())
	for off < len(p.data) && bytes.IndexByte([]byte(" \t\r\n:,"), p.data[off]) >= 0 {
		off++
	}
	tok, err := p.dec.Token()
	line, col := p.position(int64(off))
	return tok, line, col, err
}

func (p *jsonParser) value() (*yaml.Node, error) {
	tok, line, col, err := p.next()
	if err != nil {
		return nil, err
	}
	n := &yaml.Node{Kind: yaml.ScalarNode, Line: line, Column: col}
	switch v := tok.(type) {
	case json.Delim:
		return p.container(n, v)
	case string:
		n.Tag, n.Value = "!!str", v
	case json.Number:
		n.Tag, n.Value = "!!int", v.String()
		if _, err := v.Int64(); err != nil {
			n.Tag = "!!float"
		}
	case bool:
		n.Tag, n.Value = "!!bool", fmt.Sprint(v)
	default:
		n.Tag, n.Value = "!!null", "null"
	}
	return n, nil
}

// container reads the rest of an object or array opened by delim.
func (p *jsonParser) container(n *yaml.Node, delim json.Delim) (*yaml.Node, error) {
	n.Kind, n.Tag = yaml.SequenceNode, "!!seq"
	if delim == '{' {
		n.Kind, n.Tag = yaml.MappingNode, "!!map"
	}
	for p.dec.More() {
		if n.Kind == yaml.MappingNode {
			tok, line, col, err := p.next()
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: tok.(string), Line: line, Column: col})
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		n.Content = append(n.Content, v)
	}
	_, err := p.dec.Token() // the closing delimiter
	return n, err
}

// blankComments replaces // and /* */ comments outside strings with
// spaces (newlines kept), so offsets stay where they were.
func blankComments(data []byte) []byte {
	if !bytes.Contains(data, []byte("/")) {
		return data
	}
	out := bytes.Clone(data)
	inString := false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString || c != '/' || i+1 >= len(out):
		case out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case out[i+1] == '*':
			end := bytes.Index(out[i+2:], []byte("*/"))
			stop := len(out)
			if end >= 0 {
				stop = i + 2 + end + 2
			}
			for ; i < stop; i++ {
				if out[i] != '\n' {
					out[i] = ' '
				}
			}
			i--
		}
	}
	return out
}
