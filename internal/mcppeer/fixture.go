package mcppeer

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TinyPNG is the base64 of the 1×1 PNG the fixture's image tool returns
// (docs/upstream.md §8.7); tests compare against it.
const TinyPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"

// DefaultCrashDelay is how long the crash tool waits after replying before
// it calls [FixtureOptions.OnCrash]: long enough for the reply to reach the
// client first, as upstream's fixture does.
const DefaultCrashDelay = 25 * time.Millisecond

// FixtureTools lists the tools [Fixture] registers, in a stable order.
// A returned slice is a fresh copy.
func FixtureTools() []string {
	defs := fixtureToolDefs()
	names := make([]string, len(defs))
	for i, t := range defs {
		names[i] = t.name
	}
	return names
}

// FixtureOptions configures [Fixture]. The zero value gives the full tool set
// with a crash tool that only replies and a slow tool that reports nothing.
// Fixture does not mutate or retain the struct itself.
type FixtureOptions struct {
	// OnCrash is called once, CrashDelay after the crash tool has replied,
	// on its own goroutine. A child process passes a function that exits
	// with status 7; in-process tests usually signal a channel. Nil: the
	// crash tool only replies.
	OnCrash func()
	// CrashDelay overrides DefaultCrashDelay when positive.
	CrashDelay time.Duration
	// OnCancel is called when a slow call ends early because its request
	// was cancelled (the client's ctx ended or it sent
	// notifications/cancelled). Nil: nothing is reported.
	OnCancel func()
	// Without names fixture tools to leave out (see [FixtureTools]); an
	// unknown name panics, so a typo cannot silently keep a tool.
	Without []string
}

// Fixture returns a go-sdk server that implements the upstream fixture
// contract (docs/upstream.md §8.7): server info fixture-server/1.0.0, capability
// tools.listChanged, and these tools:
//
//   - add {a, b number} → the sum as text ("5");
//   - greet {name} → "Hello, <name>!";
//   - fail → isError with text "Something went wrong";
//   - image → text "Here is an image:", the 1×1 PNG [TinyPNG], text "End of image.";
//   - crash → "crashing", then OnCrash after CrashDelay;
//   - admin.reset → "reset done" (a dotted name);
//   - slow {ms} → waits ms milliseconds ("slept <ms> ms") or until cancelled
//     (then OnCancel); if the call has a progress token, it first sends one
//     progress notification (message "started"), so a test knows the call
//     is in flight before cancelling it;
//   - structured → structuredContent {"answer": 42} and text "42", with an
//     outputSchema requiring an integer answer;
//   - badstructured → the same outputSchema but {"answer": "forty-two"},
//     sent unvalidated;
//   - echo {message} → "Echo: <message>";
//   - add_tool {name} → registers [AddRuntimeTool] name on this server
//     ("added <name>"), which sends a real notifications/tools/list_changed;
//   - remove_tool {name} → removes the named tool ("removed <name>"), also
//     notifying.
//
// In-process tests may also change the tool list directly with
// srv.AddTool, [AddRuntimeTool] or srv.RemoveTools.
func Fixture(opts FixtureOptions) *mcp.Server {
	for _, name := range opts.Without {
		if !slices.Contains(FixtureTools(), name) {
			panic(fmt.Sprintf("mcppeer.Fixture: FixtureOptions.Without names %q, which is not a fixture tool (have %v)", name, FixtureTools()))
		}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "fixture-server", Version: "1.0.0"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	for _, t := range fixtureToolDefs() {
		if !slices.Contains(opts.Without, t.name) {
			t.add(s, opts)
		}
	}
	return s
}

// fixtureTool is one tool of [Fixture]: add registers it on s.
type fixtureTool struct {
	name string
	add  func(s *mcp.Server, opts FixtureOptions)
}

// fixtureToolDefs are the tools of [Fixture], in the order of
// [FixtureTools].
func fixtureToolDefs() []fixtureTool {
	return []fixtureTool{
		{"add", addAdd},
		{"greet", addGreet},
		{"fail", addFail},
		{"image", addImage},
		{"crash", addCrash},
		{"admin.reset", addAdminReset},
		{"slow", addSlow},
		{"structured", addStructured},
		{"badstructured", addBadStructured},
		{"echo", addEcho},
		{"add_tool", addAddTool},
		{"remove_tool", addRemoveTool},
	}
}

func addAdd(s *mcp.Server, _ FixtureOptions) {
	mcp.AddTool(s, &mcp.Tool{Name: "add", Title: "Add Tool", Description: "Adds two numbers."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addArgs) (*mcp.CallToolResult, any, error) {
			return textResult(formatNumber(in.A + in.B)), nil, nil
		})
}

func addGreet(s *mcp.Server, _ FixtureOptions) {
	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Greets a person by name."},
		func(_ context.Context, _ *mcp.CallToolRequest, in greetArgs) (*mcp.CallToolResult, any, error) {
			return textResult("Hello, " + in.Name + "!"), nil, nil
		})
}

func addFail(s *mcp.Server, _ FixtureOptions) {
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always returns an error."},
		func(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
			res := textResult("Something went wrong")
			res.IsError = true
			return res, nil, nil
		})
}

func addImage(s *mcp.Server, _ FixtureOptions) {
	png, err := base64.StdEncoding.DecodeString(TinyPNG)
	if err != nil {
		panic("mcppeer: TinyPNG is not base64: " + err.Error()) // a constant; cannot happen
	}
	mcp.AddTool(s, &mcp.Tool{Name: "image", Description: "Returns an image content block."},
		func(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "Here is an image:"},
				&mcp.ImageContent{Data: png, MIMEType: "image/png"},
				&mcp.TextContent{Text: "End of image."},
			}}, nil, nil
		})
}

func addCrash(s *mcp.Server, opts FixtureOptions) {
	crashDelay := DefaultCrashDelay
	if opts.CrashDelay > 0 {
		crashDelay = opts.CrashDelay
	}
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Replies, then exits the server process (crash-recovery test)."},
		func(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
			if opts.OnCrash != nil {
				time.AfterFunc(crashDelay, opts.OnCrash)
			}
			return textResult("crashing"), nil, nil
		})
}

func addAdminReset(s *mcp.Server, _ FixtureOptions) {
	mcp.AddTool(s, &mcp.Tool{Name: "admin.reset", Description: "Tool with a dotted name (normalization test)."},
		func(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
			return textResult("reset done"), nil, nil
		})
}

func addSlow(s *mcp.Server, opts FixtureOptions) {
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Waits ms milliseconds, or until the call is cancelled."},
		func(ctx context.Context, req *mcp.CallToolRequest, in slowArgs) (*mcp.CallToolResult, any, error) {
			if in.Ms < 0 {
				return nil, nil, fmt.Errorf("slow: ms must be >= 0, got %d", in.Ms)
			}
			if err := notifyStarted(ctx, req, in.Ms); err != nil {
				return nil, nil, err
			}
			timer := time.NewTimer(time.Duration(in.Ms) * time.Millisecond)
			defer timer.Stop()
			select {
			case <-timer.C:
				return textResult(fmt.Sprintf("slept %d ms", in.Ms)), nil, nil
			case <-ctx.Done():
				if opts.OnCancel != nil {
					opts.OnCancel()
				}
				return nil, nil, fmt.Errorf("slow: cancelled: %w", ctx.Err())
			}
		})
}

// notifyStarted sends the slow tool's start progress when the call has a
// progress token: it tells the test the call has arrived, so it can cancel
// a call that is really in flight.
func notifyStarted(ctx context.Context, req *mcp.CallToolRequest, ms int) error {
	tok := req.Params.GetProgressToken()
	if tok == nil {
		return nil
	}
	if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
		ProgressToken: tok, Message: "started", Total: float64(ms),
	}); err != nil {
		return fmt.Errorf("slow: sending the start progress: %w", err) // untested: needs the session to die mid-call
	}
	return nil
}

func addStructured(s *mcp.Server, _ FixtureOptions) {
	s.AddTool(&mcp.Tool{Name: "structured", Description: "Returns structuredContent {\"answer\": 42}.",
		InputSchema: emptyObject(), OutputSchema: answerSchema()},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res := textResult("42")
			res.StructuredContent = map[string]any{"answer": 42}
			return res, nil
		})
}

func addBadStructured(s *mcp.Server, _ FixtureOptions) {
	// A raw handler: the typed one would validate its own output and refuse.
	s.AddTool(&mcp.Tool{Name: "badstructured", Description: "Returns structuredContent that violates its outputSchema.",
		InputSchema: emptyObject(), OutputSchema: answerSchema()},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res := textResult("forty-two")
			res.StructuredContent = map[string]any{"answer": "forty-two"}
			return res, nil
		})
}

func addEcho(s *mcp.Server, _ FixtureOptions) {
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns the message, prefixed with \"Echo: \"."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			return textResult("Echo: " + in.Message), nil, nil
		})
}

func addAddTool(s *mcp.Server, _ FixtureOptions) {
	mcp.AddTool(s, &mcp.Tool{Name: "add_tool", Description: "Adds a tool at runtime (sends tools/list_changed)."},
		func(_ context.Context, _ *mcp.CallToolRequest, in nameArgs) (*mcp.CallToolResult, any, error) {
			if in.Name == "" {
				return nil, nil, fmt.Errorf("add_tool: name must not be empty")
			}
			AddRuntimeTool(s, in.Name)
			return textResult("added " + in.Name), nil, nil
		})
}

func addRemoveTool(s *mcp.Server, _ FixtureOptions) {
	mcp.AddTool(s, &mcp.Tool{Name: "remove_tool", Description: "Removes a tool at runtime (sends tools/list_changed)."},
		func(_ context.Context, _ *mcp.CallToolRequest, in nameArgs) (*mcp.CallToolResult, any, error) {
			s.RemoveTools(in.Name)
			return textResult("removed " + in.Name), nil, nil
		})
}

// AddRuntimeTool registers on srv a tool called name, with no inputs, that
// answers "runtime tool <name>". Adding a tool makes srv send
// notifications/tools/list_changed to its connected sessions (debounced by
// the SDK by about 10 ms), so tests can trigger a real re-sync.
func AddRuntimeTool(srv *mcp.Server, name string) {
	srv.AddTool(&mcp.Tool{Name: name, Description: "Added at runtime.", InputSchema: emptyObject()},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return textResult("runtime tool " + name), nil
		})
}

type addArgs struct {
	A float64 `json:"a" jsonschema:"First number"`
	B float64 `json:"b" jsonschema:"Second number"`
}

type greetArgs struct {
	Name string `json:"name" jsonschema:"Name of the person to greet"`
}

type slowArgs struct {
	Ms int `json:"ms" jsonschema:"How long to wait, in milliseconds"`
}

type echoArgs struct {
	Message string `json:"message" jsonschema:"The message to echo"`
}

type nameArgs struct {
	Name string `json:"name" jsonschema:"The tool name"`
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func emptyObject() map[string]any { return map[string]any{"type": "object"} }

func answerSchema() map[string]any {
	return map[string]any{
		"type":       "object",
		"properties": map[string]any{"answer": map[string]any{"type": "integer"}},
		"required":   []any{"answer"},
	}
}

// formatNumber prints a number as JavaScript's String(n) does in the usual
// range, so results match upstream's Node fixture ("5", "2.5").
func formatNumber(f float64) string {
	if f == 0 {
		return "0"
	}
	if a := math.Abs(f); a >= 1e21 || a < 1e-6 {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}
