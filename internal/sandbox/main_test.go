package sandbox_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/sandbox"
)

// probeEnv makes the re-executed test binary serve the probe: tools that
// try, as a hostile server would, what a sandbox must stop.
const probeEnv = "SANDBOX_TEST_PROBE"

func TestMain(m *testing.M) {
	sandbox.RunIfExec()
	if os.Getenv(probeEnv) != "" {
		os.Exit(serveProbe())
	}
	if os.Getenv(deathSignalEnv) != "" {
		os.Exit(printDeathSignal())
	}
	mcptest.VerifyTestMain(m)
}

type pathArgs struct {
	Path string `json:"path"`
}

type dialArgs struct {
	Network string `json:"network"`
	Addr    string `json:"addr"`
}

type pidArgs struct {
	PID int `json:"pid"`
}

type fdArgs struct {
	FD int `json:"fd"`
}

// serveProbe serves the probe tools on stdio. Each answers "ok" (with what
// it read) or the error the kernel gave.
func serveProbe() int {
	srv := mcp.NewServer(&mcp.Implementation{Name: "probe", Version: "1"}, nil)
	answer := func(s string, err error) (*mcp.CallToolResult, any, error) {
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok " + s}}}, nil, nil
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "read"}, func(_ context.Context, _ *mcp.CallToolRequest, a pathArgs) (*mcp.CallToolResult, any, error) {
		b, err := os.ReadFile(a.Path)
		return answer(string(b), err)
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "write"}, func(_ context.Context, _ *mcp.CallToolRequest, a pathArgs) (*mcp.CallToolResult, any, error) {
		return answer("", os.WriteFile(a.Path, []byte("written by the server"), 0o600))
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "dial"}, func(_ context.Context, _ *mcp.CallToolRequest, a dialArgs) (*mcp.CallToolResult, any, error) {
		c, err := net.DialTimeout(a.Network, a.Addr, 5*time.Second)
		if err != nil {
			return answer("", err)
		}
		defer c.Close()
		_, err = c.Write([]byte("hello"))
		return answer("", err)
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "signal"}, func(_ context.Context, _ *mcp.CallToolRequest, a pidArgs) (*mcp.CallToolResult, any, error) {
		return answer(strconv.Itoa(a.PID), syscall.Kill(a.PID, 0))
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "pair"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		// What runtimes do for their children's stdio, which must work.
		for _, typ := range []int{unix.SOCK_STREAM, unix.SOCK_SEQPACKET} {
			fds, err := unix.Socketpair(unix.AF_UNIX, typ|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				return answer("", err)
			}
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
		return answer("", nil)
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "dgram"}, func(_ context.Context, _ *mcp.CallToolRequest, a dialArgs) (*mcp.CallToolResult, any, error) {
		// A datagram socket of a pair, which sendto may point anywhere
		// (AF_UNIX's SOCK_RAW is one too).
		typ := unix.SOCK_DGRAM
		if a.Network == "unixraw" {
			typ = unix.SOCK_RAW
		}
		fds, err := unix.Socketpair(unix.AF_UNIX, typ|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return answer("", err)
		}
		defer unix.Close(fds[0])
		defer unix.Close(fds[1])
		return answer("", unix.Sendto(fds[0], []byte("hello"), 0, &unix.SockaddrUnix{Name: a.Addr}))
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "chown"}, func(_ context.Context, _ *mcp.CallToolRequest, a pathArgs) (*mcp.CallToolResult, any, error) {
		// What only a capability allows (CAP_CHOWN, which root has unless
		// dropped): give a file to another user.
		if err := os.WriteFile(a.Path, nil, 0o600); err != nil {
			return answer("", err)
		}
		return answer("", os.Chown(a.Path, 12345, 12345))
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "fdread"}, func(_ context.Context, _ *mcp.CallToolRequest, a fdArgs) (*mcp.CallToolResult, any, error) {
		b := make([]byte, 64)
		n, err := unix.Pread(a.FD, b, 0)
		return answer(string(b[:max(n, 0)]), err)
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "keyring"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		id, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_USER_KEYRING, false)
		return answer(strconv.Itoa(id), err)
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "limits"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		var out []string
		for _, l := range []struct {
			name     string
			resource int
		}{{"data", syscall.RLIMIT_DATA}, {"nproc", unix.RLIMIT_NPROC}, {"nofile", syscall.RLIMIT_NOFILE}} {
			var r syscall.Rlimit
			if err := syscall.Getrlimit(l.resource, &r); err != nil {
				return answer("", err)
			}
			out = append(out, fmt.Sprintf("%s=%d/%d", l.name, r.Cur, r.Max))
		}
		return answer(strings.Join(out, " "), nil)
	})
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		return 1
	}
	return 0
}
