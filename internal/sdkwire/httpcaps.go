package sdkwire

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
)

// CapabilityWriter holds the answer the Streamable HTTP handler writes to
// an initialize POST, and sends it with capabilities go-sdk has no field
// for added to the result (assumption 31), as ServerCapabilityTransport
// does on a stream connection. The answer is one small message: it is
// held whole, then written by Finish.
type CapabilityWriter struct {
	w      http.ResponseWriter
	add    map[string]json.RawMessage
	status int
	body   bytes.Buffer
}

// NewCapabilityWriter returns a writer for the handler of an initialize
// POST, which adds add to the capabilities of the result written to w.
func NewCapabilityWriter(w http.ResponseWriter, add map[string]json.RawMessage) *CapabilityWriter {
	return &CapabilityWriter{w: w, add: add}
}

// Header is the response's header.
func (c *CapabilityWriter) Header() http.Header { return c.w.Header() }

// WriteHeader records the status, sent by Finish.
func (c *CapabilityWriter) WriteHeader(status int) {
	if c.status == 0 {
		c.status = status
	}
}

// Write holds p until Finish.
func (c *CapabilityWriter) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	return c.body.Write(p)
}

// Flush does nothing: the answer goes out whole, in Finish.
func (c *CapabilityWriter) Flush() {}

// Finish writes the answer held, with the capabilities added to the
// result of a JSON body or of each SSE data line.
func (c *CapabilityWriter) Finish() error {
	body := c.body.Bytes()
	if c.status == http.StatusOK {
		body = c.rewrite(body)
		c.w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	if c.status != 0 {
		c.w.WriteHeader(c.status)
	}
	_, err := c.w.Write(body)
	return err
}

// rewrite adds the capabilities to the JSON-RPC response in body: the
// whole body, or the data lines of an event stream.
func (c *CapabilityWriter) rewrite(body []byte) []byte {
	if !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		var out bytes.Buffer
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(nil, len(body)+1)
		for sc.Scan() {
			line := sc.Bytes()
			if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
				line = append([]byte("data: "), c.message(data)...)
			}
			out.Write(line)
			out.WriteByte('\n')
		}
		return out.Bytes()
	}
	return c.message(body)
}

// message adds the capabilities to the result of one JSON-RPC response.
func (c *CapabilityWriter) message(msg []byte) []byte {
	var members map[string]json.RawMessage
	if json.Unmarshal(msg, &members) != nil || members["result"] == nil {
		return msg
	}
	members["result"] = withCapabilities(members["result"], c.add)
	out, err := json.Marshal(members)
	if err != nil {
		return msg // unreachable: members came from valid JSON
	}
	return out
}
