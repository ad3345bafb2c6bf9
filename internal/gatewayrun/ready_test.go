package gatewayrun_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/gatewayauth"
	gatewaykind "github.com/mcpbridge/mcpbridge/internal/kinds/gateway"
)

// heldKind's instances settle their first attempt when release is closed.
type heldKind struct{ release chan struct{} }

func (heldKind) Name() string { return "held" }
func (heldKind) Decode(*yaml.Node, func(string) (string, bool)) (host.Spec, error) {
	return host.Spec{Config: struct{}{}, Name: "held", StartupTimeout: time.Hour}, nil
}
func (k heldKind) Start(context.Context, host.Spec, host.Env) (host.Instance, error) {
	return &heldInstance{release: k.release}, nil
}

type heldInstance struct{ release chan struct{} }

func (i *heldInstance) Ready() <-chan struct{} { return i.release }
func (i *heldInstance) StartErr() error        { return nil }
func (i *heldInstance) Close() error           { return nil }
func (i *heldInstance) Status() host.Status {
	select {
	case <-i.release:
		return host.Status{State: host.StateReady}
	default:
		return host.Status{State: host.StateStarting}
	}
}

// --ready-timeout 0 serves requests at once, but /readyz still says
// whether the servers' first start has settled: a replica a balancer
// adds is not sent clients before its servers have had their chance
// (/readyz answered 200 before any server had started).
func TestReadyTimeoutZeroKeepsReadinessProbe(t *testing.T) {
	release := make(chan struct{})
	var closeRelease sync.Once
	defer closeRelease.Do(func() { close(release) })
	pr, pw := io.Pipe()
	defer pw.Close()
	cfg := config("- {id: h, name: held}\n", nil, pw)
	cfg.Catalog = func(k *gatewayauth.Keeper) *host.Catalog {
		return host.NewCatalog(gatewaykind.NewKind(k), heldKind{release})
	}
	cfg.Stdio, cfg.HTTPAddr, cfg.ReadyTimeout = false, "127.0.0.1:0", 0
	endpoint, stop := runHTTP(t, cfg, pr)
	defer stop()
	readyz := strings.Replace(endpoint, "/mcp", "/readyz", 1)
	probe := func() int {
		resp, err := http.Get(readyz)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := probe(); got != http.StatusServiceUnavailable {
		t.Errorf("/readyz before the first start settled: %d, want 503", got)
	}
	// Requests are not held meanwhile: 0 does not wait.
	listCtx, listCancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer listCancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(listCtx, &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(listCtx, nil); err != nil {
		t.Errorf("tools/list before the first start settled: %v, want an answer at once", err)
	}
	closeRelease.Do(func() { close(release) })
	deadline := time.Now().Add(30 * time.Second)
	for probe() != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("/readyz never answered 200 once the first start settled")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
