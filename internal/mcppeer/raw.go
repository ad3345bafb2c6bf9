package mcppeer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// JSON-RPC error codes the raw server answers with.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternalError  = -32603
)

// rawProtocolVersions are the versions the raw server echoes back in
// initialize; anything else is answered with the first.
func rawProtocolVersions() []string {
	return []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
}

// RawScript says what a [RawServer] answers. It is plain JSON, so the child
// kind "raw" can read it from a file (see [ReadRawScript]). The zero value
// is a server with no tools.
type RawScript struct {
	// ServerName is the serverInfo name in initialize; default "raw-server".
	ServerName string `json:"serverName,omitempty"`
	// ProtocolVersion, when set, is answered to every initialize instead of
	// the negotiated version (to test a client facing an odd version).
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// Pages is the tools/list answer, one entry per page. Page 0 answers a
	// request without cursor, page i answers the cursor [RawCursor](i).
	Pages []RawPage `json:"pages,omitempty"`
	// Endless makes tools/list never end: a cursor past the last page gets
	// the last page's tools again with a new cursor (to test page caps).
	Endless bool `json:"endless,omitempty"`
	// Results maps a tool name to the raw JSON "result" of its tools/call,
	// sent as is: unknown block types, bare numbers, legacy toolResult,
	// anything that is valid JSON.
	Results map[string]json.RawMessage `json:"results,omitempty"`
	// Errors maps a tool name to a JSON-RPC error answered to its
	// tools/call; it wins over Results. A tool in neither map gets
	// -32602 "unknown tool".
	Errors map[string]RawError `json:"errors,omitempty"`
	// ListChangeOnCall maps a tool name to a new Pages value: after
	// answering a call to that tool, the server switches to those pages and
	// sends notifications/tools/list_changed on every stdio connection.
	ListChangeOnCall map[string][]RawPage `json:"listChangeOnCall,omitempty"`
	// Silent lists methods whose requests get no answer at all, as a server
	// that ignores what it does not know (e.g. "server/discover").
	Silent []string `json:"silent,omitempty"`
}

// RawPage is one page of a scripted tools/list result.
type RawPage struct {
	// Tools are raw tool definitions; see [RawTool] for the usual shape.
	Tools []json.RawMessage `json:"tools"`
	// NextCursor, when set, replaces the automatic next cursor (RawCursor of
	// the next page, or none on the last page), e.g. to repeat a cursor.
	NextCursor string `json:"nextCursor,omitempty"`
}

// RawError is a scripted JSON-RPC error.
type RawError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// RawCursor is the cursor that fetches page i of a [RawScript].
func RawCursor(i int) string { return "page-" + strconv.Itoa(i) }

// RawTool returns the raw definition of a tool with the given name and
// description and an empty object input schema.
func RawTool(name, description string) json.RawMessage {
	b, err := json.Marshal(map[string]any{
		"name":        name,
		"description": description,
		"inputSchema": map[string]any{"type": "object"},
	})
	if err != nil {
		panic("mcppeer.RawTool: " + err.Error()) // strings always marshal
	}
	return b
}

// RawServer is a minimal hand-written MCP server speaking newline-delimited
// JSON-RPC, without the SDK, so tests can send results the SDK cannot
// produce. It answers initialize (echoing a known protocol version, else
// 2025-11-25; capabilities {tools:{listChanged:true}}), ping,
// server/discover (with -32601, so go-sdk clients fall back to initialize),
// tools/list and tools/call from its [RawScript], and -32601 to anything
// else. Notifications and responses from the client are ignored.
//
// One RawServer may serve several connections at once (stdio-like streams
// through [RawServer.Serve], HTTP through [RawServer.ServeHTTP]); its
// methods are safe for concurrent use.
type RawServer struct {
	mu     sync.Mutex
	script RawScript
	conns  map[*rawConn]struct{}
}

// rawConn is one stream connection; wmu keeps frames whole when a reply and
// a notification are written at once.
type rawConn struct {
	wmu sync.Mutex
	w   io.Writer
}

func (c *rawConn) write(frame []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(append(frame, '\n'))
	return err
}

// NewRawServer returns a RawServer answering from script.
func NewRawServer(script RawScript) *RawServer {
	return &RawServer{script: script, conns: map[*rawConn]struct{}{}}
}

// ServeRaw serves one connection of a new [RawServer] for script: it reads
// requests from r and writes replies to w until r ends or ctx is done.
func ServeRaw(ctx context.Context, r io.Reader, w io.Writer, script RawScript) error {
	return NewRawServer(script).Serve(ctx, r, w)
}

// SetScript replaces the script; later requests see the new one. Pair it
// with [RawServer.NotifyToolsChanged] to make a client re-list.
func (s *RawServer) SetScript(script RawScript) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = script
}

// NotifyToolsChanged sends notifications/tools/list_changed on every
// connection being served by [RawServer.Serve] (HTTP has no stream to send
// it on) and returns the write errors, joined.
func (s *RawServer) NotifyToolsChanged() error {
	return s.SendLine(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
}

// SendLine writes line, as one frame, on every connection being served by
// [RawServer.Serve]: a notification, or garbage to test a client's
// handling of a broken server. It returns the write errors, joined.
func (s *RawServer) SendLine(line string) error {
	s.mu.Lock()
	conns := make([]*rawConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	var errs []error
	for _, c := range conns {
		if err := c.write([]byte(line)); err != nil {
			errs = append(errs, fmt.Errorf("sending %.60q: %w", line, err))
		}
	}
	return errors.Join(errs...)
}

// Serve answers newline-delimited JSON-RPC read from r on w until r ends
// (nil), a read or write fails (that error), or ctx is done (nil). On ctx
// done it stops a blocked read by setting a past read deadline on r (net.Conn,
// pipe files) or, failing that, closing r if it is an io.Closer; for any
// other reader Serve returns only when r does. Requests are answered in
// order.
func (s *RawServer) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	c := &rawConn{w: w}
	s.mu.Lock()
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()

	lines := make(chan []byte)
	readDone := make(chan error, 1)
	stop := make(chan struct{})
	go func() { readDone <- readLines(r, lines, stop) }()
	for {
		select {
		case <-ctx.Done():
			close(stop)
			unblockReader(r)
			<-readDone
			return nil
		case err := <-readDone:
			return err
		case line := <-lines:
			reply, after := s.handle(line)
			if reply != nil {
				if err := c.write(reply); err != nil {
					close(stop)
					unblockReader(r)
					<-readDone
					return fmt.Errorf("mcptest raw server: writing a reply: %w", err)
				}
			}
			if after != nil {
				after()
			}
		}
	}
}

// readLines sends each non-blank line of r to lines until r ends (nil) or
// fails, or stop is closed.
func readLines(r io.Reader, lines chan<- []byte, stop <-chan struct{}) error {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if t := bytes.TrimSpace(line); len(t) > 0 {
			select {
			case lines <- t:
			case <-stop:
				return nil
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			select {
			case <-stop:
				return nil // the error is the deadline or close we caused
			default:
				return fmt.Errorf("mcptest raw server: reading a request: %w", err)
			}
		}
	}
}

func unblockReader(r io.Reader) {
	if d, ok := r.(interface{ SetReadDeadline(time.Time) error }); ok && d.SetReadDeadline(time.Unix(1, 0)) == nil {
		return
	}
	if c, ok := r.(io.Closer); ok {
		c.Close()
	}
}

// ServeHTTP answers one JSON-RPC message per POST with an application/json
// reply (202 Accepted for notifications and responses), as a Streamable
// HTTP server that never streams. GET and DELETE get 405, which clients
// take as "no standalone stream" and "no session".
func (s *RawServer) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "mcptest raw server: only POST is supported", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, "mcptest raw server: reading the request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	reply, after := s.handle(bytes.TrimSpace(body))
	if reply == nil {
		w.WriteHeader(http.StatusAccepted)
	} else {
		w.Header().Set("Content-Type", "application/json")
		w.Write(reply)
	}
	if after != nil {
		after()
	}
}

// rawRequest is any incoming JSON-RPC message.
type rawRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// handle answers one message. reply is nil when no reply is due; after, if
// not nil, must run once the reply is sent.
func (s *RawServer) handle(msg []byte) (reply []byte, after func()) {
	var req rawRequest
	if err := json.Unmarshal(msg, &req); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return errorFrame(nil, codeParseError, "parse error: "+err.Error()), nil
		}
		return errorFrame(nil, codeInvalidRequest, "invalid request: "+err.Error()), nil
	}
	id := req.ID
	if len(id) == 0 || string(id) == "null" || (req.Method == "" && (req.Result != nil || req.Error != nil)) {
		return nil, nil // a notification or a response: nothing to answer
	}
	if req.Method == "" {
		return errorFrame(id, codeInvalidRequest, "invalid request: no method"), nil
	}

	s.mu.Lock()
	script := s.script
	s.mu.Unlock()

	if slices.Contains(script.Silent, req.Method) {
		return nil, nil
	}
	switch req.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(req.Params, &p) // a bad params object just means no version
		version := rawProtocolVersions()[0]
		if slices.Contains(rawProtocolVersions(), p.ProtocolVersion) {
			version = p.ProtocolVersion
		}
		if script.ProtocolVersion != "" {
			version = script.ProtocolVersion
		}
		name := script.ServerName
		if name == "" {
			name = "raw-server"
		}
		return resultFrame(id, map[string]any{
			"protocolVersion": version,
			"capabilities":    map[string]any{"tools": map[string]any{"listChanged": true}},
			"serverInfo":      map[string]any{"name": name, "version": "1.0.0"},
		}), nil
	case "ping":
		return resultFrame(id, map[string]any{}), nil
	case "tools/list":
		return s.listTools(id, req.Params, script), nil
	case "tools/call":
		return s.callTool(id, req.Params, script)
	default:
		// server/discover lands here too: -32601 is what makes a go-sdk
		// client fall back to the initialize handshake.
		return errorFrame(id, codeMethodNotFound, "method not found: "+req.Method), nil
	}
}

func (s *RawServer) listTools(id, params json.RawMessage, script RawScript) []byte {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return errorFrame(id, codeInvalidParams, "tools/list: bad params: "+err.Error())
		}
	}
	page := 0
	if p.Cursor != nil {
		n, err := strconv.Atoi(strings.TrimPrefix(*p.Cursor, "page-"))
		if !strings.HasPrefix(*p.Cursor, "page-") || err != nil || n < 0 || (n >= len(script.Pages) && !script.Endless) {
			return errorFrame(id, codeInvalidParams, fmt.Sprintf("tools/list: unknown cursor %q", *p.Cursor))
		}
		page = n
	}
	tools := []json.RawMessage{}
	next := ""
	switch {
	case page < len(script.Pages):
		pg := script.Pages[page]
		if pg.Tools != nil {
			tools = pg.Tools
		}
		next = pg.NextCursor
		if next == "" && (page+1 < len(script.Pages) || script.Endless) {
			next = RawCursor(page + 1)
		}
	case script.Endless:
		if len(script.Pages) > 0 && script.Pages[len(script.Pages)-1].Tools != nil {
			tools = script.Pages[len(script.Pages)-1].Tools
		}
		next = RawCursor(page + 1)
	}
	res := map[string]any{"tools": tools}
	if next != "" {
		res["nextCursor"] = next
	}
	return resultFrame(id, res)
}

func (s *RawServer) callTool(id, params json.RawMessage, script RawScript) (reply []byte, after func()) {
	var p struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.Name == "" {
		return errorFrame(id, codeInvalidParams, "tools/call: params must be an object with a tool name"), nil
	}
	if pages, ok := script.ListChangeOnCall[p.Name]; ok {
		after = func() {
			s.mu.Lock()
			s.script.Pages = pages
			s.mu.Unlock()
			s.NotifyToolsChanged() // a dead connection is the caller's to notice
		}
	}
	if e, ok := script.Errors[p.Name]; ok {
		b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
		if err != nil {
			return errorFrame(id, codeInternalError, fmt.Sprintf("mcptest raw server: the scripted error for tool %q does not marshal: %v", p.Name, err)), after
		}
		return b, after
	}
	res, ok := script.Results[p.Name]
	if !ok {
		return errorFrame(id, codeInvalidParams, fmt.Sprintf("tools/call: unknown tool %q", p.Name)), after
	}
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": res})
	if err != nil {
		return errorFrame(id, codeInternalError, fmt.Sprintf("mcptest raw server: the scripted result for tool %q is not valid JSON: %v", p.Name, err)), after
	}
	return b, after
}

// resultFrame and errorFrame build reply frames from values that always
// marshal; id is the request's raw id (nil becomes null).
func resultFrame(id json.RawMessage, result any) []byte {
	return mustMarshal(map[string]any{"jsonrpc": "2.0", "id": rawID(id), "result": result})
}

func errorFrame(id json.RawMessage, code int, message string) []byte {
	return mustMarshal(map[string]any{"jsonrpc": "2.0", "id": rawID(id), "error": map[string]any{"code": code, "message": message}})
}

func rawID(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return json.RawMessage("null")
	}
	return id
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("mcptest raw server: " + err.Error()) // untested: only called on values built here, which marshal
	}
	return b
}
