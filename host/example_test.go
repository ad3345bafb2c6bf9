package host_test

import (
	"context"
	"encoding/json"
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/host"
	clientkind "github.com/mcpbridge/mcpbridge/internal/kinds/client"
	"github.com/mcpbridge/mcpbridge/tool"
)

// echoKind is a toy plugin kind: each instance publishes one tool named
// after its config's word, through the Source the host gives it.
type echoKind struct{}

func (echoKind) Name() string { return "echo" }

func (echoKind) Decode(n *yaml.Node, _ func(string) (string, bool)) (host.Spec, error) {
	var c struct{ Word string }
	if err := n.Decode(&c); err != nil {
		return host.Spec{}, err
	}
	return host.Spec{Config: c.Word, Name: c.Word, Claims: []host.Claim{{Key: "word", Value: c.Word}}}, nil
}

func (echoKind) Start(_ context.Context, spec host.Spec, env host.Env) (host.Instance, error) {
	word := spec.Config.(string)
	err := env.Tools.Publish(tool.Tool{
		Name:        "echo_" + word,
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(context.Context, json.RawMessage) (tool.Output, error) {
			return tool.Output{Content: []tool.Content{tool.Text(word)}}, nil
		},
	})
	if err != nil {
		return nil, err
	}
	ready := make(chan struct{})
	close(ready)
	return &echoInstance{src: env.Tools, ready: ready}, nil
}

type echoInstance struct {
	src   *tool.Source
	ready chan struct{}
}

func (e *echoInstance) Ready() <-chan struct{} { return e.ready }
func (e *echoInstance) StartErr() error        { return nil }
func (e *echoInstance) Status() host.Status {
	return host.Status{State: host.StateReady, Tools: e.src.Len()}
}
func (e *echoInstance) Close() error { e.src.Close(); return nil }

func ExampleHost() {
	catalog := host.NewCatalog(echoKind{})
	reg := tool.NewRegistry()
	h, _ := host.New(host.Options{Catalog: catalog, Registry: reg})
	defer h.Close()

	plan, err := catalog.Parse("mcpbridge.yaml", []byte(`
- {id: a, name: echo, config: {word: hello}}
- {id: b, name: echo, config: {word: world}}
- {id: c, name: echo, disabled: true}
`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := h.Apply(context.Background(), plan); err != nil {
		fmt.Println(err)
	}
	for _, t := range reg.List() {
		fmt.Println(t.Name)
	}
	for _, st := range h.Status() {
		fmt.Println(st.ID, st.State)
	}
	// Output:
	// echo_hello
	// echo_world
	// a ready
	// b ready
	// c disabled
}

func ExampleCatalog_Parse() {
	catalog := host.NewCatalog(clientkind.NewKind(clientkind.KindOptions{}))
	_, err := catalog.Parse("mcpbridge.yaml", []byte(`
- id: github
  name: mcp-client
  config: {serverName: gh, transport: stdio, command: github-mcp-server}
- id: web
  name: mcp-client
  config: {serverName: gh, transport: streamable-http, url: "https://example.com/mcp"}
`), nil)
	fmt.Println(err)
	// Output:
	// mcpbridge.yaml:7:24: entry "web": config.serverName: serverName "gh" is already used by entry "github" (line 2); pick a unique serverName for each entry
}

// Merge layers a project's file over a user's: an entry of the project
// with a user entry's id replaces it; one that claims what a user entry
// claims is invalid, and the rest run.
func ExampleMerge() {
	catalog := host.NewCatalog(echoKind{})
	user, _ := catalog.Parse("user.yaml", []byte(`
- {id: greet, name: echo, config: {word: hello}}
- {id: part, name: echo, config: {word: bye}}
`), nil)
	project, _ := catalog.Parse("mcpbridge.yaml", []byte(`
- {id: greet, name: echo, config: {word: hi}}
- {id: leave, name: echo, config: {word: bye}}
`), nil)
	plan := host.Merge(user, project)
	fmt.Println(plan.Source)
	for _, pe := range plan.Entries {
		fmt.Printf("%s from %s: %v %v\n", pe.Entry.ID, pe.Entry.File, pe.Spec.Config, pe.Err)
	}
	// Output:
	// user.yaml + mcpbridge.yaml
	// part from user.yaml: bye <nil>
	// greet from mcpbridge.yaml: hi <nil>
	// leave from mcpbridge.yaml: <nil> mcpbridge.yaml:3:42: entry "leave": config.word: word "bye" is already used by entry "part" in user.yaml:3; pick another word, or give this entry the id "part" to replace that one
}
