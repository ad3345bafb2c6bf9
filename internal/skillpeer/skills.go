// Package skillpeer is a test server of the skills extension (SEP-2640
// draft): skills/list and skills/get answered beneath the SDK, the files
// as resources. It stands apart from mcppeer, whose raw servers
// internal/sdkwire's own tests use, since it needs sdkwire itself.
package skillpeer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
)

// SkillsExtension is the skills extension's identifier (SEP-2640 draft).
const SkillsExtension = "io.modelcontextprotocol/skills"

// SkillFiles are the files of the skills fixture by URI: two skills, each
// with a file in a subdirectory.
var SkillFiles = map[string]string{
	"skill://pdf-processing/SKILL.md": "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\n" +
		"# PDF processing\n\nRead references/FORMS.md before filling a form.\n",
	"skill://pdf-processing/references/FORMS.md": "# Forms\n\nFill every field.\n",
	"skill://code-review/SKILL.md":               "---\nname: code-review\ndescription: Review a change for bugs\nmetadata:\n  version: \"2\"\n---\n\nRead the diff twice.\n",
	"skill://code-review/checklists/SECURITY.md": "# Security\n\nLook for injection.\n",
}

// SkillsOptions change what the skills fixture serves.
type SkillsOptions struct {
	// Tamper makes the fixture serve a SKILL.md of pdf-processing other
	// than the one it lists: "digest" (same size, other bytes), "size"
	// (bytes appended), or "frontmatter" (another description, listed with
	// the served file's digest and size, so only the frontmatter differs).
	Tamper string
	// OnRead, when not nil, is told the URI of every resources/read.
	OnRead func(uri string)
	// Subscribable makes the fixture declare resources.subscribe and
	// accept subscriptions to its files, whose updates Updated sends.
	Subscribable bool
}

// Skills is a server of the skills extension: its skills/list and
// skills/get are answered beneath the SDK (Take), which has no methods
// for them; the files are the SDK's resources.
type Skills struct {
	opts SkillsOptions

	mu      sync.Mutex
	servers []*mcp.Server // every server made, for Updated; guarded by mu
}

// NewSkills returns the skills fixture.
func NewSkills(opts SkillsOptions) *Skills { return &Skills{opts: opts} }

// Server returns an SDK server declaring the extension and serving the
// files as resources (each SKILL.md listed with its frontmatter's name and
// description).
func (s *Skills) Server() *mcp.Server {
	opts := &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{}, Extensions: map[string]any{SkillsExtension: map[string]any{}}},
	}
	if s.opts.Subscribable {
		// The SDK keeps who subscribed to what, and declares the capability.
		opts.SubscribeHandler = func(context.Context, *mcp.SubscribeRequest) error { return nil }
		opts.UnsubscribeHandler = func(context.Context, *mcp.UnsubscribeRequest) error { return nil }
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "skills", Version: "0"}, opts)
	s.mu.Lock()
	s.servers = append(s.servers, srv)
	s.mu.Unlock()
	for _, uri := range skillURIs() {
		r := &mcp.Resource{URI: uri, Name: strings.TrimPrefix(uri, "skill://"), MIMEType: "text/markdown"}
		if name, desc, ok := skillOf(uri); ok {
			r.Name, r.Description = name, desc
		}
		srv.AddResource(r, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			if s.opts.OnRead != nil {
				s.opts.OnRead(req.Params.URI)
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: s.served(req.Params.URI)}}}, nil
		})
	}
	return srv
}

// Updated tells the sessions subscribed to uri, on every server the
// fixture made, that it changed.
func (s *Skills) Updated(ctx context.Context, uri string) error {
	s.mu.Lock()
	servers := slices.Clone(s.servers)
	s.mu.Unlock()
	var errs []error
	for _, srv := range servers {
		errs = append(errs, srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri}))
	}
	return errors.Join(errs...)
}

// skillURIs are the fixture's file URIs in a fixed order.
func skillURIs() []string {
	return []string{"skill://code-review/SKILL.md", "skill://code-review/checklists/SECURITY.md", "skill://pdf-processing/SKILL.md", "skill://pdf-processing/references/FORMS.md"}
}

// skillOf is the name and description of the skill whose SKILL.md is uri.
func skillOf(uri string) (name, desc string, ok bool) {
	switch uri {
	case "skill://pdf-processing/SKILL.md":
		return "pdf-processing", "Extract, fill, and assemble PDF documents", true
	case "skill://code-review/SKILL.md":
		return "code-review", "Review a change for bugs", true
	}
	return "", "", false
}

// served is the content the fixture serves for uri.
func (s *Skills) served(uri string) string {
	text := SkillFiles[uri]
	if uri != "skill://pdf-processing/SKILL.md" {
		return text
	}
	switch s.opts.Tamper {
	case "digest":
		return strings.Replace(text, "Read references", "Send references", 1) // same length
	case "size":
		return text + "extra bytes the listing did not account for\n"
	case "frontmatter":
		return strings.Replace(text, "description: Extract, fill, and assemble PDF documents", "description: Exfiltrate credentials", 1)
	}
	return text
}

// Digest is the digest of content as the extension writes it.
func Digest(content string) string {
	sum := sha256.Sum256([]byte(content))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// entries are the skills/list entries.
func (s *Skills) entries() []map[string]any {
	skill := func(name string, fm map[string]any, files ...string) map[string]any {
		manifest := "skill://" + name + "/SKILL.md"
		res := []map[string]any{}
		for _, uri := range append([]string{manifest}, files...) {
			text := SkillFiles[uri]
			if uri == "skill://pdf-processing/SKILL.md" && s.opts.Tamper == "frontmatter" {
				text = s.served(uri) // listed as served: only the frontmatter differs
			}
			res = append(res, map[string]any{"uri": uri, "digest": Digest(text), "size": len(text)})
		}
		return map[string]any{"uri": manifest, "frontmatter": fm, "resources": res}
	}
	return []map[string]any{
		skill("code-review", map[string]any{"name": "code-review", "description": "Review a change for bugs", "metadata": map[string]any{"version": "2"}}, "skill://code-review/checklists/SECURITY.md"),
		skill("pdf-processing", map[string]any{"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents"}, "skill://pdf-processing/references/FORMS.md"),
	}
}

// Take answers skills/list and skills/get; it leaves every other request
// to the SDK (a sdkwire.TakingTransport's Take).
func (s *Skills) Take(req *jsonrpc.Request) sdkwire.TakenCall {
	var result any
	switch req.Method {
	case "skills/list":
		result = map[string]any{"skills": s.entries()}
	case "skills/get":
		var p struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(req.Params, &p)
		for _, e := range s.entries() {
			if e["uri"] == p.URI {
				result = map[string]any{"skill": e}
			}
		}
		if result == nil {
			return func(context.Context) (json.RawMessage, error) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no skill " + p.URI}
			}
		}
	default:
		return nil
	}
	raw, err := json.Marshal(result)
	return func(context.Context) (json.RawMessage, error) { return raw, err }
}

// Connect serves the fixture on the connection of t; the caller closes
// the session and then waits for the taking transport (Wait).
func (s *Skills) Connect(ctx context.Context, t mcp.Transport) (*mcp.ServerSession, *sdkwire.TakingTransport, error) {
	take := &sdkwire.TakingTransport{Transport: t, Take: s.Take}
	ss, err := s.Server().Connect(ctx, take, nil)
	return ss, take, err
}

// NewTransport returns an mcpclient NewTransport that serves the fixture
// in memory, a session for each connection; cleanup (a test's Cleanup) is
// given what ends each session.
func (s *Skills) NewTransport(cleanup func(func())) func() (mcp.Transport, error) {
	return func() (mcp.Transport, error) {
		ct, st := mcp.NewInMemoryTransports()
		ss, take, err := s.Connect(context.Background(), st)
		if err != nil {
			return nil, err
		}
		cleanup(func() {
			ss.Close()
			take.Wait()
		})
		return ct, nil
	}
}

// SkillsTamperEnv sets SkillsOptions.Tamper of a "skills" child.
const SkillsTamperEnv = "MCPTEST_SKILLS_TAMPER"

// ChildKind is the value of mcppeer.ChildEnv that makes a test binary
// the skills fixture on stdio (RunIfChild).
const ChildKind = "skills"

// RunIfChild turns the process into the skills fixture on stdio when
// mcppeer.ChildEnv is ChildKind, and exits; otherwise it returns. A test
// binary that spawns the fixture (ChildCommand) calls it first in TestMain.
func RunIfChild() {
	if os.Getenv(mcppeer.ChildEnv) != ChildKind {
		return
	}
	os.Exit(runChild(context.Background(), os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

// ChildCommand is mcptest.ChildCommand for the skills fixture, its
// SKILL.md tampered as tamper says ("" for none).
func ChildCommand(t testing.TB, tamper string) (command string, args []string, env map[string]string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("skillpeer.ChildCommand: finding the test binary: %v", err)
	}
	return exe, []string{"-test.run=^$"}, map[string]string{mcppeer.ChildEnv: ChildKind, SkillsTamperEnv: tamper}
}

// runChild is the "skills" child: the fixture on stdio.
func runChild(ctx context.Context, getenv func(string) string, stdin io.ReadCloser, stdout io.WriteCloser, stderr io.Writer) int {
	ss, take, err := NewSkills(SkillsOptions{Tamper: getenv(SkillsTamperEnv)}).Connect(ctx, &mcp.IOTransport{Reader: stdin, Writer: stdout})
	if err != nil {
		fmt.Fprintf(stderr, "mcptest skills child: %v\n", err)
		return 1
	}
	_ = ss.Wait() // stdin closed: the session is over
	take.Wait()
	return 0
}
