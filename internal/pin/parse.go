package pin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/confpos"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
)

var hexDigest = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Parse decodes the text of a lock file. Its errors are *confpos.Error
// values (joined), "line:col: path: what", so that an editor can jump to
// the spot; they render with a leading space after the position's colon
// left to the caller ("mcpbridge.lock:3:5: …").
func Parse(data []byte) (*Lock, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var l Lock
	if err := dec.Decode(&l); err != nil {
		return nil, decodeError(data, err, dec.InputOffset())
	}
	if dec.More() {
		return nil, at(data, dec.InputOffset(), "", "text after the lock's closing brace")
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, at(data, 0, "", "not a lock: "+err.Error()) // untested: valid JSON is valid YAML
	}
	doc := &root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	if err := l.check(doc); err != nil {
		return nil, err
	}
	return &l, nil
}

// check applies what JSON decoding cannot: the version, and that every
// pin's name, hash and definition agree.
func (l *Lock) check(root *yaml.Node) error {
	var errs []error
	report := func(path, msg string) {
		n := yamlconf.Locate(root, path)
		errs = append(errs, &confpos.Error{Line: n.Line, Column: n.Column, Path: path, Msg: msg})
	}
	if l.Version != lockVersion {
		report("lockVersion", fmt.Sprintf("must be %d (this mcpbridge's lock format)", lockVersion))
	}
	if l.Servers == nil {
		report("servers", "is missing: a lock holds the pins of its servers")
	}
	for _, server := range slices.Sorted(maps.Keys(l.Servers)) {
		sp := l.Servers[server]
		sPath := yamlconf.JoinKey("servers", server)
		if sp == nil {
			report(sPath, "must be an object of tools and prompts")
			continue
		}
		for _, group := range []struct {
			key  string
			pins map[string]Pin
		}{{"tools", sp.Tools}, {"prompts", sp.Prompts}} {
			for _, name := range slices.Sorted(maps.Keys(group.pins)) {
				p := group.pins[name]
				p.Definition = checkPin(yamlconf.JoinKey(yamlconf.JoinKey(sPath, group.key), name), name, p, report)
				group.pins[name] = p // as canonical JSON, which Changed compares
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errors.Join(errs...)
}

// checkPin reports a pin whose parts disagree (edited by hand, or
// damaged), and returns its definition in canonical form.
func checkPin(path, name string, p Pin, report func(path, msg string)) json.RawMessage {
	if !hexDigest.MatchString(p.SHA256) {
		report(path+".sha256", "must be 64 lowercase hex digits")
		return p.Definition
	}
	var def struct {
		Name string `json:"name"`
	}
	if len(p.Definition) == 0 || json.Unmarshal(p.Definition, &def) != nil {
		report(path+".definition", "must be the definition's JSON object")
		return p.Definition
	}
	if def.Name != name {
		report(path+".definition.name", fmt.Sprintf("is %q, but the pin is for %q", def.Name, name))
		return p.Definition
	}
	canon, err := Canonical(p.Definition)
	if err != nil || digest(canon) != p.SHA256 {
		report(path+".sha256", "does not match the definition: it was edited by hand or damaged")
		return p.Definition
	}
	return canon
}

// decodeError positions an error of encoding/json in data.
// off is where the decoder stopped, for the errors that carry no offset
// (an unknown field).
func decodeError(data []byte, err error, off int64) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return at(data, syn.Offset-1, "", "not valid JSON: "+syn.Error()) // Offset is past the bad byte
	case errors.As(err, &typ):
		return typeError(data, typ)
	case errors.Is(err, io.EOF):
		return at(data, 0, "", "empty: a lock is a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return at(data, int64(len(data)), "", "not valid JSON: the text ends inside a value")
	}
	return at(data, off, "", strings.TrimPrefix(err.Error(), "json: ")) // an unknown field
}

func jsonKind(goKind string) string {
	switch goKind {
	case "int":
		return "an integer"
	case "string":
		return "a string"
	case "map", "ptr", "struct":
		return "an object"
	case "slice":
		return "a list"
	}
	return "a " + goKind
}

// typeError points at the value of the wrong type: the text is valid JSON,
// so its YAML reading has the position.
func typeError(data []byte, typ *json.UnmarshalTypeError) error {
	msg := fmt.Sprintf("must be %s, got a JSON %s", jsonKind(typ.Type.Kind().String()), typ.Value)
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil || len(root.Content) != 1 {
		return at(data, typ.Offset, typ.Field, msg) // untested: valid JSON is valid YAML
	}
	n := yamlconf.Locate(root.Content[0], typ.Field)
	return &confpos.Error{Line: n.Line, Column: n.Column, Path: typ.Field, Msg: msg}
}

// at is an error at byte offset off of data.
func at(data []byte, off int64, path, msg string) error {
	off = min(max(off, 0), int64(len(data)))
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := int(off) - bytes.LastIndexByte(data[:off], '\n')
	return &confpos.Error{Line: line, Column: col, Path: path, Msg: msg}
}
