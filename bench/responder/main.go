// Command responder is the minimal stdio MCP server of `go run ./bench`: a
// newline-delimited JSON-RPC responder without any SDK that answers
// initialize (after -delay), tools/list (echo plus t1…t<n-1>, n = -tools),
// tools/call of echo (always the fixed text "Echo: hi") and ping with fixed
// lines, and refuses every other request with -32601, so a go-sdk client's
// server/discover probe falls back to initialize.
//
// It is deliberately small, so that what is measured is the client: the call
// rows use it as the raw responder (its own cost per call is a few
// microseconds: one small decode and one write), and the startup row starts
// thirty of them with a delay, so that the clients' parallelism is
// measured, not the servers' own start-up (the bench binary re-executed
// costs about 45 ms of CPU per start on a 2-core VM, mostly package
// initialization; this one about 7).
//
// With -http ADDR it answers the same requests as POSTs over HTTP instead
// (each body one request, each answer one application/json body, the
// session id a constant), after printing the address it listens on: the
// HTTP floor, what a go-sdk client's call over Streamable HTTP costs when
// the server does nothing.
//
// The driver builds it with `go build`; it is not meant to be run by hand.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"
)

// echoResult is the tools/call result of echo: the text the go-sdk
// fixture's echo gives for {"message":"hi"}.
const echoResult = `{"content":[{"type":"text","text":"Echo: hi"}]}`

func main() {
	delay := flag.Duration("delay", 0, "how long initialize takes")
	tools := flag.Int("tools", 1, "how many tools tools/list returns (echo, then t1, t2, …)")
	addr := flag.String("http", "", "answer over HTTP on this address instead of stdio")
	flag.Parse()
	serveOn := serve
	if *addr != "" {
		serveOn = func(_ io.Reader, w io.Writer, delay time.Duration, list []byte) error {
			return serveHTTP(*addr, w, delay, list)
		}
	}
	if err := serveOn(os.Stdin, os.Stdout, *delay, toolList(*tools)); err != nil {
		fmt.Fprintln(os.Stderr, "responder:", err) // untested: needs a stdout that fails
		os.Exit(1)
	}
}

// toolList is the tools/list result: echo, then t1…t<n-1>.
func toolList(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"tools":[`)
	for i := range n {
		if i == 0 {
			b.WriteString(`{"name":"echo","description":"Returns the message, prefixed with \"Echo: \".","inputSchema":{"type":"object","properties":{"message":{"type":"string"}}}}`)
			continue
		}
		fmt.Fprintf(&b, `,{"name":"t%d","description":"tool %d","inputSchema":{"type":"object"}}`, i, i)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// serve answers requests read from r on w, in order, until r ends.
func serve(r io.Reader, w io.Writer, delay time.Duration, list []byte) error {
	br := bufio.NewReaderSize(r, 64<<10)
	bw := bufio.NewWriter(w)
	for {
		line, err := br.ReadBytes('\n')
		if reply := handle(bytes.TrimSpace(line), delay, list); reply != nil {
			bw.Write(reply)
			bw.WriteByte('\n')
			if ferr := bw.Flush(); ferr != nil {
				return fmt.Errorf("writing a reply: %w", ferr)
			}
		}
		if err != nil {
			return nil // stdin closed: the client is done
		}
	}
}

// request is what the responder reads of a message.
type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		ProtocolVersion string `json:"protocolVersion"`
		Name            string `json:"name"`
	} `json:"params"`
}

// handle returns the reply to one message, nil when none is due.
func handle(line []byte, delay time.Duration, list []byte) []byte {
	var req request
	if len(line) == 0 || json.Unmarshal(line, &req) != nil || len(req.ID) == 0 || string(req.ID) == "null" || req.Method == "" {
		return nil // a notification, a response, or noise: nothing to answer
	}
	var result string
	switch req.Method {
	case "initialize":
		time.Sleep(delay) // the simulated slow start
		version := req.Params.ProtocolVersion
		switch version {
		case "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05":
		default:
			version = "2025-11-25"
		}
		result = `{"protocolVersion":` + strconv.Quote(version) + `,"capabilities":{"tools":{}},"serverInfo":{"name":"responder","version":"1.0.0"}}`
	case "tools/list":
		result = string(list)
	case "tools/call":
		if req.Params.Name != "echo" {
			return errorReply(req.ID, -32602, "unknown tool: "+req.Params.Name)
		}
		result = echoResult
	case "ping":
		result = `{}`
	default:
		return errorReply(req.ID, -32601, "method not found: "+req.Method)
	}
	return []byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":` + result + `}`)
}

func errorReply(id json.RawMessage, code int, msg string) []byte {
	m, _ := json.Marshal(msg) // a string always marshals
	return []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":` + strconv.Itoa(code) + `,"message":` + string(m) + `}}`)
}

// serveHTTP answers POSTs on addr, after writing "listening ADDR" to w, until
// the process ends.
func serveHTTP(addr string, w io.Writer, delay time.Duration, list []byte) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "listening %s\n", ln.Addr())
	return http.Serve(ln, httpHandler(delay, list))
}

// httpHandler answers each POST's one request as handle does, the answer
// as an application/json body (202 and no body when none is due). It
// refuses the GET stream (405), as the MCP spec lets a server, and accepts
// a DELETE.
func httpHandler(delay time.Duration, list []byte) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
		case http.MethodDelete:
			return
		default:
			rw.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return // the client left
		}
		reply := handle(bytes.TrimSpace(body), delay, list)
		if reply == nil {
			rw.WriteHeader(http.StatusAccepted)
			return
		}
		h := rw.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Mcp-Session-Id", "floor")
		rw.Write(reply)
	})
}
