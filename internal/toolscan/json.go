package toolscan

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// maxDepth bounds the walk of nested schemas; a deeper value is reported.
const maxDepth = 64

// errJSON stops the walk of a value that is not valid JSON.
var errJSON = errors.New("invalid JSON")

// jsonWalk visits every string of a JSON document (schemas, annotations as
// sent) in document order, with its path, without decoding the rest:
// decoding whole schemas into maps cost more than the rules themselves.
// Keywords whose values are syntax (type, format, pattern, required, $ref)
// are scanned too: the model reads them as it reads a description, and
// no test of a value's shape tells syntax from text written to look like
// it ("ignore-all-previous-instructions", base64); syntax matches no rule.
type jsonWalk struct {
	b []byte
	i int
	w *walker
}

// rawAt scans the strings of a JSON value: schemas and annotations as sent.
func (w *walker) rawAt(key string, b json.RawMessage) {
	if len(b) == 0 || string(b) == "null" {
		return
	}
	w.push(key)
	j := jsonWalk{b: b, w: w}
	_ = j.value(0, true) // not JSON: the client refuses such a definition before this
	w.pop(1)
}

func (j *jsonWalk) ws() {
	for j.i < len(j.b) && (j.b[j.i] == ' ' || j.b[j.i] == '\t' || j.b[j.i] == '\n' || j.b[j.i] == '\r') {
		j.i++
	}
}

// value walks one value; emit false skips it (nested too deep).
func (j *jsonWalk) value(depth int, emit bool) error {
	if depth > maxDepth {
		if emit {
			j.w.here(Medium, "limit", fmt.Sprintf("nested deeper than %d levels, not scanned", maxDepth))
		}
		emit = false
	}
	j.ws()
	if j.i >= len(j.b) {
		return errJSON
	}
	switch j.b[j.i] {
	case '{':
		return j.object(depth, emit)
	case '[':
		return j.array(depth, emit)
	case '"':
		s, err := j.str()
		if err == nil && emit {
			j.w.text(s)
		}
		return err
	}
	for j.i < len(j.b) && !isDelim(j.b[j.i]) {
		j.i++ // number, true, false, null
	}
	return nil
}

func isDelim(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

func (j *jsonWalk) object(depth int, emit bool) error {
	j.i++
	for {
		j.ws()
		if j.i < len(j.b) && j.b[j.i] == '}' {
			j.i++
			return nil
		}
		key, err := j.str()
		if err != nil {
			return err
		}
		if j.ws(); j.i >= len(j.b) || j.b[j.i] != ':' {
			return errJSON
		}
		j.i++
		j.w.push(key)
		if emit {
			j.w.text(key) // a key (a property's name, or any other) is read by the model too
		}
		err = j.value(depth+1, emit)
		j.w.pop(1)
		if err != nil {
			return err
		}
		if err := j.next('}'); err != nil {
			return err
		}
	}
}

func (j *jsonWalk) array(depth int, emit bool) error {
	j.i++
	for n := 0; ; n++ {
		j.ws()
		if j.i < len(j.b) && j.b[j.i] == ']' {
			j.i++
			return nil
		}
		j.w.push(strconv.Itoa(n))
		err := j.value(depth+1, emit)
		j.w.pop(1)
		if err != nil {
			return err
		}
		if err := j.next(']'); err != nil {
			return err
		}
	}
}

// next consumes the comma between members, leaving the closing byte.
func (j *jsonWalk) next(closing byte) error {
	j.ws()
	switch {
	case j.i < len(j.b) && j.b[j.i] == ',':
		j.i++
		return nil
	case j.i < len(j.b) && j.b[j.i] == closing:
		return nil
	}
	return errJSON
}

// str reads a string; only one with escapes is decoded by encoding/json.
func (j *jsonWalk) str() (string, error) {
	if j.i >= len(j.b) || j.b[j.i] != '"' {
		return "", errJSON
	}
	start, escaped := j.i, false
	for j.i++; j.i < len(j.b); j.i++ {
		switch j.b[j.i] {
		case '\\':
			escaped = true
			j.i++
		case '"':
			j.i++
			if !escaped {
				return string(j.b[start+1 : j.i-1]), nil
			}
			var s string
			if err := json.Unmarshal(j.b[start:j.i], &s); err != nil {
				return "", errJSON
			}
			return s, nil
		}
	}
	return "", errJSON
}
