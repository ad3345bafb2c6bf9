package gatewayrun_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/gatewayauth"
	"github.com/mcpbridge/mcpbridge/internal/gatewayrun"
	gatewaykind "github.com/mcpbridge/mcpbridge/internal/kinds/gateway"
	viewkind "github.com/mcpbridge/mcpbridge/internal/kinds/view"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

func TestMain(m *testing.M) { mcptest.VerifyTestMain(m) }

// config is a run of the config text: the gateway entry applied to the
// run's Keeper, the tool-search kind for the sessions' views.
func config(config string, stdin io.Reader, stderr io.Writer) gatewayrun.Config {
	var cat *host.Catalog
	read := func(c *host.Catalog) (*host.Plan, error) {
		return c.ParseIsolated("f.yaml", []byte(config), func(string) (string, bool) { return "", false })
	}
	return gatewayrun.Config{
		Stdio: true, ReadyTimeout: -1, Logger: slog.New(slog.DiscardHandler),
		Stdin: stdin, Stdout: io.Discard, Stderr: stderr,
		Catalog: func(k *gatewayauth.Keeper) *host.Catalog {
			cat = host.NewCatalog(gatewaykind.NewKind(k), viewkind.NewKind())
			return cat
		},
		Load: func(c *host.Catalog) (gatewayrun.Source, error) {
			plan, err := read(c)
			return gatewayrun.Source{Plan: plan}, err
		},
		Reload: read,
		Files:  func() []string { return nil },
	}
}

// On stdio the run ends, everything closed, when the client leaves.
func TestRunEndsWhenTheStdioClientLeaves(t *testing.T) {
	if err := gatewayrun.Run(context.Background(), config("", strings.NewReader(""), io.Discard)); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// An invalid gateway entry guards every call, so nothing starts; an
// address on the network without a token is refused before anything
// starts.
func TestRunRefusesBeforeStarting(t *testing.T) {
	bad := config("- {id: gw, name: gateway, config: {auth: {nonsense: 1}}}\n", strings.NewReader(""), io.Discard)
	err := gatewayrun.Run(context.Background(), bad)
	if _, ok := errors.AsType[*gatewayrun.GatewayEntryError](err); !ok || !strings.Contains(err.Error(), "the gateway entry guards every call and cannot be applied as written") {
		t.Errorf("an invalid gateway entry: %v", err)
	}
	open := config("", nil, io.Discard)
	open.Stdio, open.HTTPAddr = false, "0.0.0.0:0"
	if err := gatewayrun.Run(context.Background(), open); !errors.Is(err, gateway.ErrNotLoopback) {
		t.Errorf("a network address without a token: %v, want ErrNotLoopback", err)
	}
}

// Served over HTTP, the run says where and stops with its context.
func TestRunServesHTTPUntilItsContextEnds(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	cfg := config("", nil, pw)
	cfg.Stdio, cfg.HTTPAddr = false, "127.0.0.1:0"
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- gatewayrun.Run(ctx, cfg) }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "mcpbridge: serving MCP on http://127.0.0.1:") {
		t.Errorf("announced %q, %v", line, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}
