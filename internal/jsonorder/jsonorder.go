// Package jsonorder reads a JSON object's members in the order they were
// written: a Go map would sort them, and a schema's author often puts
// the important properties first (code mode's declarations, elicitation
// forms).
package jsonorder

import (
	"bytes"
	"encoding/json"
)

// Member is one member of a JSON object.
type Member struct {
	Name  string
	Value json.RawMessage
}

// Members returns the members of the JSON object raw in the order
// written: none when raw is not an object, those read before a syntax
// error when it breaks off.
func Members(raw json.RawMessage) []Member {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out []Member
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return out
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return out
		}
		out = append(out, Member{Name: k.(string), Value: v})
	}
	return out
}
