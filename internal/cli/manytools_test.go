package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/mcpclient"
)

// rawToolsEntry is a config entry for a raw server (this test binary)
// listing n small tools in pages of per.
func rawToolsEntry(t *testing.T, name string, n, per int) string {
	var pages []mcppeer.RawPage
	for p := 0; p*per < n; p++ {
		tools := make([]json.RawMessage, 0, per)
		for i := p * per; i < min(n, (p+1)*per); i++ {
			tools = append(tools, mcppeer.RawTool("tool_"+strconv.Itoa(i), "A small tool that does one small thing."))
		}
		pages = append(pages, mcppeer.RawPage{Tools: tools})
	}
	script := mcptest.WriteRawScript(t, mcppeer.RawScript{Pages: pages})
	cmd, args, env := mcptest.ChildCommand(t, "raw", mcppeer.RawScriptEnv+"="+script)
	argsJSON, _ := json.Marshal(args)
	envJSON, _ := json.Marshal(env)
	return fmt.Sprintf("- id: %s\n  name: mcp-client\n  config: {serverName: %s, transport: stdio, command: %q, args: %s, env: %s}\n", name, name, cmd, argsJSON, envJSON)
}

// vmRSS is a process's resident set in MiB, from /proc.
func vmRSS(t *testing.T, pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return kb >> 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// serve with a server listing 300,000 small tools (under the 64 MiB
// catalog limit) refuses them with an error naming the server and the
// limit, and serves another at the limit (20,000 tools) within a bounded
// resident set.
func TestServeManyTools(t *testing.T) {
	cfg := writeConfig(t, rawToolsEntry(t, "many", mcpclient.DefaultMaxTools, 5000)+rawToolsEntry(t, "toomany", 300_000, 10_000))
	p := startServingCmd(t, measuredCommand(t, "serve", "--http", "127.0.0.1:0", "--config", cfg, "--token-env", "GW_AUTH"), []string{"GW_AUTH=s3cret"})
	want := fmt.Sprintf(`mcp-client(toomany): the server lists more than %d tools, the bridge's limit per server (MaxTools)`, mcpclient.DefaultMaxTools)
	mcptest.Eventually(t, 60*time.Second, func() bool { return strings.Contains(p.stderr.String(), want) }, "the refusal of toomany")
	mcptest.Eventually(t, 60*time.Second, func() bool { return backendState(t, p, "many") == "ready" }, "many to be ready")
	const limit = 300 // MiB
	rss := vmRSS(t, p.pid)
	if rss > limit {
		t.Errorf("serve's resident set is %d MiB with %d tools, over %d MiB", rss, mcpclient.DefaultMaxTools, limit)
	}
	t.Logf("serve: %d MiB resident with %d tools served and 300,000 refused", rss, mcpclient.DefaultMaxTools)
}

// backendState is the state /healthz gives the backend name.
func backendState(t *testing.T, p *servingProcess, name string) string {
	return healthState(t, p, "s3cret", name)
}

// healthState is the state p's /healthz, asked with token, gives the
// backend name ("" when it lists none of that name).
func healthState(t *testing.T, p *servingProcess, token, name string) string {
	req, _ := http.NewRequest(http.MethodGet, p.base()+"/healthz", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var health struct {
		Backends []struct{ Name, State string } `json:"backends"`
	}
	json.NewDecoder(resp.Body).Decode(&health)
	for _, b := range health.Backends {
		if b.Name == name {
			return b.State
		}
	}
	return ""
}
