package confpos_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/confpos"
	"github.com/mcpbridge/mcpbridge/host"
)

// listenerKind is a plugin kind as a program outside this module writes it:
// its config is {port: 1..65535}.
type listenerKind struct{}

func (listenerKind) Name() string { return "listener" }

// Decode reports every problem at once, each at its node; a missing key has
// no node, so the host places it at the entry.
func (listenerKind) Decode(config *yaml.Node, _ func(string) (string, bool)) (host.Spec, error) {
	var errs confpos.Errors
	var port *yaml.Node
	for i := 0; config != nil && i+1 < len(config.Content); i += 2 {
		k, v := config.Content[i], config.Content[i+1]
		if k.Value != "port" {
			errs = append(errs, &confpos.Error{Line: k.Line, Column: k.Column, Path: "config." + k.Value, Msg: "unknown key"})
			continue
		}
		port = v
	}
	if port == nil {
		errs = append(errs, &confpos.Error{Path: "config.port", Msg: "is required"})
	} else if n, err := strconv.Atoi(port.Value); err != nil || n < 1 || n > 65535 {
		errs = append(errs, &confpos.Error{Line: port.Line, Column: port.Column, Path: "config.port", Msg: "must be a port number, 1 to 65535"})
	}
	if len(errs) > 0 {
		return host.Spec{}, errs
	}
	return host.Spec{Config: port.Value, Name: "listener"}, nil
}

func (listenerKind) Start(context.Context, host.Spec, host.Env) (host.Instance, error) {
	return nil, errors.New("not run in this example")
}

// A kind's positioned problems reach the user with the file, line, column
// and entry.
func Example() {
	file := []byte(`- id: web
  name: listener
  config:
    port: 80000
    host: localhost
- id: admin
  name: listener
  config: {}
`)
	_, err := host.NewCatalog(listenerKind{}).Parse("listeners.yaml", file, nil)
	fmt.Println(err)
	// Output:
	// listeners.yaml:4:11: entry "web": config.port: must be a port number, 1 to 65535
	// listeners.yaml:5:5: entry "web": config.host: unknown key
	// listeners.yaml:6:3: entry "admin": config.port: is required
}

func ExampleErrors() {
	err := fmt.Errorf("decoding: %w", confpos.Errors{
		{Line: 4, Column: 11, Path: "config.port", Msg: "must be a port number, 1 to 65535"},
		{Path: "config.name", Msg: "is required"},
	})
	for _, e := range confpos.AsErrors(err) {
		fmt.Println(e)
	}
	// Output:
	// 4:11: config.port: must be a port number, 1 to 65535
	// config.name: is required
}

// The host fills in the file and the entry of a kind's problem; the same
// type renders both.
func ExampleError() {
	fromKind := &confpos.Error{Line: 4, Column: 11, Path: "config.port", Msg: "must be a port number, 1 to 65535"}
	placed := *fromKind
	placed.File, placed.EntryID = "listeners.yaml", "web"
	fmt.Println(fromKind)
	fmt.Println(&placed)
	// Output:
	// 4:11: config.port: must be a port number, 1 to 65535
	// listeners.yaml:4:11: entry "web": config.port: must be a port number, 1 to 65535
}
