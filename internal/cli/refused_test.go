package cli

import (
	"net"
	"strings"
	"testing"
)

// A --url with no server listening at its address says so, and what to
// do, not only the dial's "connection refused".
func TestURLNothingListening(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // the port is free: nothing listens there
	r := mcpbridge(t, "", "tools", "--url", "http://"+addr+"/mcp")
	want := "connection refused: nothing is listening at " + addr + ": start the server, or correct its URL"
	if r.code != ExitFailed || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and %q", r.code, r.stderr, want)
	}
}
