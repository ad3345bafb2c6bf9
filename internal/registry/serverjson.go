// Package registry reads the MCP Registry (the official one at
// registry.modelcontextprotocol.io, or any registry that serves its /v0.1
// API) and turns a server.json into an mcp-client entry: which command
// runs a package, which URL and headers reach a remote, and which
// variables the user must set. It writes nothing and starts nothing; the
// CLI prints what it finds and writes the entry.
package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Server is a server.json (schema 2025-12-11): one version of one server,
// with the packages that run it locally and the remotes that serve it.
type Server struct {
	Schema      string      `json:"$schema,omitempty"`
	Name        string      `json:"name"`
	Description string      `json:"description,omitempty"`
	Title       string      `json:"title,omitempty"`
	Version     string      `json:"version"`
	WebsiteURL  string      `json:"websiteUrl,omitempty"`
	Repository  *Repository `json:"repository,omitempty"`
	Packages    []Package   `json:"packages,omitempty"`
	Remotes     []Transport `json:"remotes,omitempty"`
}

// Repository is where the server's source is.
type Repository struct {
	URL       string `json:"url,omitempty"`
	Source    string `json:"source,omitempty"`
	Subfolder string `json:"subfolder,omitempty"`
}

// Package is one way to run the server locally: a package of a package
// registry (npm, pypi, oci, nuget, mcpb) and how to start it.
type Package struct {
	RegistryType         string     `json:"registryType"`
	RegistryBaseURL      string     `json:"registryBaseUrl,omitempty"`
	Identifier           string     `json:"identifier"`
	Version              string     `json:"version,omitempty"`
	FileSHA256           string     `json:"fileSha256,omitempty"`
	RuntimeHint          string     `json:"runtimeHint,omitempty"`
	Transport            Transport  `json:"transport"`
	RuntimeArguments     []Argument `json:"runtimeArguments,omitempty"`
	PackageArguments     []Argument `json:"packageArguments,omitempty"`
	EnvironmentVariables []KeyValue `json:"environmentVariables,omitempty"`
}

// Transport is a package's transport (stdio, or an HTTP one it serves) or
// a remote (streamable-http or sse, with URL variables and headers).
type Transport struct {
	Type      string           `json:"type"`
	URL       string           `json:"url,omitempty"`
	Headers   []KeyValue       `json:"headers,omitempty"`
	Variables map[string]Input `json:"variables,omitempty"`
}

// Input is a value the user may have to give: a fixed value, a default,
// or nothing (then the user is asked). Variables fill the {names} of Value.
type Input struct {
	Description string           `json:"description,omitempty"`
	IsRequired  bool             `json:"isRequired,omitempty"`
	Format      string           `json:"format,omitempty"`
	Value       string           `json:"value,omitempty"`
	IsSecret    bool             `json:"isSecret,omitempty"`
	Default     string           `json:"default,omitempty"`
	Choices     []string         `json:"choices,omitempty"`
	Variables   map[string]Input `json:"variables,omitempty"`
}

// Argument is a command-line argument: positional (a value, or a
// valueHint naming what to give) or named (--flag and its value).
type Argument struct {
	Input
	Type       string `json:"type"`
	Name       string `json:"name,omitempty"`
	ValueHint  string `json:"valueHint,omitempty"`
	IsRepeated bool   `json:"isRepeated,omitempty"`
}

// KeyValue is an environment variable or a header.
type KeyValue struct {
	Input
	Name string `json:"name"`
}

// The package registry types the schema names.
const (
	TypeNPM   = "npm"
	TypePyPI  = "pypi"
	TypeOCI   = "oci"
	TypeNuGet = "nuget"
	TypeMCPB  = "mcpb"
)

// The transport types.
const (
	TransportStdio          = "stdio"
	TransportStreamableHTTP = "streamable-http"
	TransportSSE            = "sse"
)

// namePattern is the schema's pattern for a server name: a reverse-DNS
// namespace, one slash, a name.
var namePattern = regexp.MustCompile(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`)

// MalformedError is a server.json (or a registry answer) that is not what
// the schema says: Where names the document, Msg the problem.
type MalformedError struct {
	Where string
	Msg   string
}

func (e *MalformedError) Error() string {
	return fmt.Sprintf("%s is not a valid server.json (schema 2025-12-11): %s", e.Where, e.Msg)
}

// ParseServer decodes and checks a server.json; where names it in errors
// (a file name, or the registry URL it came from). The registry's answer
// around one (what registry show --json prints: {"server": …, "_meta": …})
// is read as its server.json.
func ParseServer(data []byte, where string) (Server, error) {
	var s Server
	if err := decodeJSON(unwrapAnswer(data), &s, where); err != nil {
		return Server{}, err
	}
	if err := s.check(); err != nil {
		return Server{}, &MalformedError{Where: where, Msg: err.Error()}
	}
	return s, nil
}

// LooksLikeServerJSON reports whether data is a server.json rather than
// another client's config: an object with a name and a version, or one
// that names the server.json schema.
func LooksLikeServerJSON(data []byte) bool {
	var probe struct {
		Schema     string          `json:"$schema"`
		Name       string          `json:"name"`
		Version    string          `json:"version"`
		MCPServers json.RawMessage `json:"mcpServers"`
	}
	if json.Unmarshal(unwrapAnswer(data), &probe) != nil || probe.MCPServers != nil {
		return false
	}
	return strings.Contains(probe.Schema, "server.schema.json") || probe.Name != "" && probe.Version != ""
}

// decodeJSON decodes data into v, saying what is wrong in terms of the
// document: not JSON at all, or a field of the wrong type.
func decodeJSON(data []byte, v any, where string) error {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return &MalformedError{Where: where, Msg: "it is not a JSON object" + startsWith(trimmed)}
	}
	if err := json.Unmarshal(trimmed, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return &MalformedError{Where: where, Msg: fmt.Sprintf("%s must be %s, not a JSON %s", te.Field, jsonType(te.Type.Kind().String()), te.Value)}
		}
		return &MalformedError{Where: where, Msg: "it is not valid JSON: " + err.Error()}
	}
	return nil
}

// startsWith shows how a document that is not JSON starts, so that an
// HTML error page or a proxy's answer is recognized.
func startsWith(b []byte) string {
	if len(b) == 0 {
		return " (it is empty)"
	}
	const max = 60
	s := string(b)
	if len(s) > max {
		s = s[:max] + "…"
	}
	return fmt.Sprintf(" (it starts with %q)", s)
}

// jsonType names a Go kind as the JSON type that decodes into it.
func jsonType(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return "a number"
}

// check applies the schema's requirements that mapping relies on.
func (s Server) check() error {
	if s.Name == "" {
		return errors.New(`"name" is required (like "io.github.owner/server")`)
	}
	if !namePattern.MatchString(s.Name) {
		return fmt.Errorf(`"name" %q must be a reverse-DNS namespace, one "/", and a name (like "io.github.owner/server")`, s.Name)
	}
	if s.Version == "" {
		return errors.New(`"version" is required`)
	}
	if err := checkPinned(s.Version); err != nil {
		return err
	}
	for i, p := range s.Packages {
		if err := p.check(); err != nil {
			return fmt.Errorf("packages[%d]: %w", i, err)
		}
	}
	for i, r := range s.Remotes {
		if err := checkRemote(r); err != nil {
			return fmt.Errorf("remotes[%d]: %w", i, err)
		}
	}
	return nil
}

func (p Package) check() error {
	switch {
	case p.RegistryType == "":
		return errors.New(`"registryType" is required (npm, pypi, oci, nuget or mcpb)`)
	case p.Identifier == "":
		return errors.New(`"identifier" is required`)
	case strings.HasPrefix(p.Identifier, "-"):
		// It would reach npx, uvx, docker or dnx as an option of theirs.
		return fmt.Errorf(`"identifier" %q must not start with "-"`, p.Identifier)
	}
	if err := checkPinned(p.Version); err != nil {
		return err
	}
	switch p.Transport.Type {
	case TransportStdio:
	case TransportStreamableHTTP, TransportSSE:
		if p.Transport.URL == "" {
			return fmt.Errorf(`transport %q needs a "url"`, p.Transport.Type)
		}
	case "":
		return errors.New(`"transport" is required: {"type": "stdio"}, or an HTTP transport with its "url"`)
	default:
		return fmt.Errorf(`transport type %q is not stdio, streamable-http or sse`, p.Transport.Type)
	}
	return nil
}

// checkPinned refuses the version "latest": a server or package that
// names it is not one version, and the registry's API reads "latest" as
// whichever version is newest.
func checkPinned(version string) error {
	if version == "latest" {
		return errors.New(`"version" must be a specific version, not "latest"`)
	}
	return nil
}

func checkRemote(r Transport) error {
	if r.Type != TransportStreamableHTTP && r.Type != TransportSSE {
		return fmt.Errorf(`type %q is not streamable-http or sse`, r.Type)
	}
	if r.URL == "" {
		return errors.New(`"url" is required`)
	}
	return nil
}

// unwrapAnswer is the server.json in data when data is the registry's
// answer around one (a "server" object, no name of its own); data
// otherwise.
func unwrapAnswer(data []byte) []byte {
	var answer struct {
		Server json.RawMessage `json:"server"`
		Name   *string         `json:"name"`
	}
	if json.Unmarshal(data, &answer) != nil || answer.Name != nil || len(answer.Server) == 0 || answer.Server[0] != '{' {
		return data
	}
	return answer.Server
}
