package oauth

import (
	"context"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// refreshChildEnv makes the re-executed test binary one of the processes
// of TestRefreshAcrossProcesses: "STATEDIR KEY".
const refreshChildEnv = "OAUTHTEST_REFRESH_CHILD"

func TestMain(m *testing.M) {
	if v := os.Getenv(refreshChildEnv); v != "" {
		os.Exit(refreshChild(v))
	}
	mcptest.VerifyTestMain(m)
}

// waitLimit bounds every wait; it decides only how long a broken test
// hangs.
const waitLimit = 30 * time.Second

// connect connects a go-sdk client to srv with the handler opts build,
// through the handler's Transport as mcpclient does, and calls echo once.
func connect(t *testing.T, srv *mcptest.OAuthServer, cfg *Config, opts Options) error {
	t.Helper()
	return connectVia(t, srv, cfg, opts, nil)
}

// connectVia is connect with base beneath the handler's Transport (nil:
// http.DefaultTransport).
func connectVia(t *testing.T, srv *mcptest.OAuthServer, cfg *Config, opts Options, base http.RoundTripper) error {
	t.Helper()
	h, err := NewHandler(cfg, Target{ServerName: "srv", URL: srv.URL}, opts)
	if err != nil {
		t.Fatalf("NewHandler: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "oauth-test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, OAuthHandler: h,
		HTTPClient: &http.Client{Transport: Transport(h, base)}}, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}})
	if err != nil {
		return err
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "Echo: hi" {
		t.Errorf("echo: %q", got)
	}
	return nil
}

func newServer(t *testing.T, opts mcptest.OAuthOptions) *mcptest.OAuthServer {
	return mcptest.NewOAuthServer(t, mcppeer.Fixture(mcppeer.FixtureOptions{}), opts)
}

// browse is the browser of a login: it follows the authorization URL's
// redirects to the loopback callback.
func browse(t *testing.T) func(string) error {
	return func(u string) error {
		go func() {
			resp, err := http.Get(u)
			if err != nil {
				t.Errorf("browser: %v", err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("browser: the callback answered %s", resp.Status)
			}
		}()
		return nil
	}
}
