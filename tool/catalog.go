package tool

import (
	"context"
	"encoding/json"
	"errors"
)

// Offer is everything one source publishes in one swap: its tools and, for
// a source that is a server, its resources, resource templates and prompts
// with the functions that read, render and complete them.
type Offer struct {
	Tools []Tool

	// Server names the source of the kinds below (an MCP server's
	// serverName); required when any of them is set, and unique among the
	// registry's sources that publish them.
	Server string
	// Resources are the server's listed resources, in its order.
	Resources []Resource
	// Templates are the server's resource templates, in its order.
	Templates []ResourceTemplate
	// Prompts are the server's prompts under their public names.
	Prompts []Prompt
	// Skills are the server's skills under their public names (skill.go).
	Skills []Skill
	// Read reads one of the server's resources by URI (listed, matched by
	// a template, or neither: the server decides). Required with Resources
	// or Templates.
	Read ReadFunc
	// Complete answers argument completion for the server's prompts and
	// templates; nil when the server offers none.
	Complete CompleteFunc
	// Subscribe and Unsubscribe ask the server for (or to stop) update
	// notifications of one resource; nil when it offers none. Updates come
	// back through Source.ResourceUpdated.
	Subscribe, Unsubscribe func(ctx context.Context, uri string) error
	// HideResources keeps this server's resources out of the model-facing
	// resource tools (an entry's resourceTools: false); other consumers
	// still see them.
	HideResources bool
	// Withheld are tools the source knows but does not publish (a
	// definition that changed since the user approved it), by public
	// name: why, and what the user can do about it. They are not listed;
	// Execute of one answers a *WithheldError with that text rather than
	// a bare unknown tool.
	Withheld map[string]string
}

// Resource is one resource a server lists.
type Resource struct {
	Server      string
	URI         string
	Name        string
	Title       string
	Description string
	MIMEType    string
	// Wire is the resource object as the server sent it (every field, for
	// consumers that forward or print it whole); optional, valid JSON.
	Wire json.RawMessage
}

// ResourceTemplate is one URI template (RFC 6570) a server lists.
type ResourceTemplate struct {
	Server      string
	URITemplate string
	Name        string
	Title       string
	Description string
	MIMEType    string
	// Wire is the template object as sent; optional, valid JSON.
	Wire json.RawMessage
}

// Prompt is one prompt a server offers, under a public name (the same
// naming as tools) unique among the registry's prompts.
type Prompt struct {
	Name        string
	Origin      Origin
	Title       string
	Description string
	Arguments   []PromptArgument
	// Get renders the prompt with args; required.
	Get PromptFunc
	// Wire is the prompt object as sent; optional, valid JSON.
	Wire json.RawMessage
}

// PromptArgument is one argument a prompt takes.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// ReadFunc reads the resource at uri.
type ReadFunc func(ctx context.Context, uri string) (ReadResult, error)

// PromptFunc renders a prompt.
type PromptFunc func(ctx context.Context, args map[string]string) (PromptResult, error)

// CompleteFunc answers one completion request, whose Ref names the
// server's own prompt (Origin.Name) or template.
type CompleteFunc func(ctx context.Context, req CompleteRequest) (Completion, error)

// ReadResult is a read resource: Content is the text a model or a terminal
// sees (blobs as size and MIME notes), Wire the server's result as sent.
type ReadResult struct {
	Content []Content
	Wire    json.RawMessage
}

// PromptResult is a rendered prompt.
type PromptResult struct {
	Description string
	Messages    []PromptMessage
	// Wire is the server's result as sent.
	Wire json.RawMessage
}

// PromptMessage is one message of a rendered prompt; Content is its text
// view (non-text blocks as notes).
type PromptMessage struct {
	Role    string
	Content []Content
}

// Completion reference types, as MCP names them.
const (
	RefPrompt   = "ref/prompt"
	RefResource = "ref/resource"
)

// CompleteRequest asks for completions of one argument.
type CompleteRequest struct {
	// Server picks the server of a ref/resource template offered by more
	// than one; optional.
	Server string
	Ref    CompletionRef
	// Argument is the argument being completed and its value so far.
	Argument CompletionArgument
	// Context holds the values of arguments already given.
	Context map[string]string
}

// CompletionRef is what is being completed: a prompt (Type RefPrompt, Name
// its public name at the registry, its raw name at the source) or a
// resource template (Type RefResource, URI the template).
type CompletionRef struct {
	Type string
	Name string
	URI  string
}

// CompletionArgument is the argument being completed.
type CompletionArgument struct {
	Name  string
	Value string
}

// Completion is a completion answer.
type Completion struct {
	Values  []string
	Total   int
	HasMore bool
}

// ErrNoServer is wrapped by errors about a server that publishes no
// resources, templates or prompts.
var ErrNoServer = errors.New("no such server")

// ErrUnsupported is wrapped by errors about something the server does not
// offer (completion, subscriptions).
var ErrUnsupported = errors.New("not offered by the server")
