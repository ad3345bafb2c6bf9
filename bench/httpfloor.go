package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpFloorCaller calls echo with a raw go-sdk client over Streamable HTTP
// on the raw responder answering HTTP itself (-http): no SDK on the server
// and no backend behind it, so its time is what HTTP alone costs the
// client, the least any gateway served over HTTP adds to a call.
func httpFloorCaller(ctx context.Context, responder string) (caller, error) {
	cmd := exec.Command(responder, "-http", "127.0.0.1:0")
	cmd.Env = cleanEnviron()
	stdin, stdout, err := startPiped(cmd, "http floor")
	if err != nil {
		return nil, err
	}
	stop := func() error { stdin.Close(); return stopProcess(cmd) }
	line, err := bufio.NewReader(stdout).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !ok {
		return nil, errors.Join(fmt.Errorf("http floor: the responder printed %q, want its address (%v)", line, err), stop())
	}
	t := &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}
	c, err := rawSDKCallerWith(ctx, responderChild(responder, 0, 1), legacyVersion, t)
	if err != nil {
		return nil, errors.Join(err, stop())
	}
	g := c.(*goCaller)
	closeSession := g.closer
	g.closer = func() error { return errors.Join(closeSession(), stop()) }
	return g, nil
}
