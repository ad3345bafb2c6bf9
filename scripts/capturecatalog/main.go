// Command capturecatalog lists the tools of the MCP servers named in
// testdata/toolcatalog/servers/servers.json through mcpbridge's own client
// (mcpclient) and writes them as the tool-search retrieval catalog. Run it
// through scripts/capture-tool-catalog.sh, which installs the pinned
// servers into a temporary directory first.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
	"github.com/mcpbridge/mcpbridge/internal/retrieval"
)

// spec is one server of servers.json. In args and env values, {tmp} is a
// scratch directory and {dummy} a placeholder where a server insists on
// a token to start: listing tools needs no credentials.
type spec struct {
	Name    string            `json:"name"`
	Package string            `json:"package"`
	Bin     string            `json:"bin"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	// Files are written into {tmp} before the server starts (name →
	// content), for a server that reads a config file (not a secret).
	Files map[string]string `json:"files"`
}

// placeholder is what {dummy} becomes: not a credential.
const placeholder = "not-a-real-token"

// scratch stands for the scratch directory in the catalog.
const scratch = "$SCRATCH"

func main() {
	specs := flag.String("servers", "testdata/toolcatalog/servers/servers.json", "the servers to list")
	modules := flag.String("modules", "", "node_modules directory the servers are installed in (required)")
	node := flag.String("node", "node", "the Node executable that runs them")
	out := flag.String("out", "testdata/toolcatalog/catalog.json", "the catalog to write")
	command := flag.String("command", "scripts/capture-tool-catalog.sh", "the command recorded in the catalog as its source")
	timeout := flag.Duration("timeout", 90*time.Second, "how long one server may take to start and list its tools")
	flag.Parse()
	if err := run(*specs, *modules, *node, *out, *command, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "capturecatalog:", err)
		os.Exit(1)
	}
}

func run(specsPath, modules, node, out, command string, timeout time.Duration) error {
	if modules == "" {
		return errors.New("-modules is required")
	}
	b, err := os.ReadFile(specsPath)
	if err != nil {
		return err
	}
	var specs []spec
	if err := json.Unmarshal(b, &specs); err != nil {
		return fmt.Errorf("%s: %w", specsPath, err)
	}
	tmp, err := os.MkdirTemp("", "capturecatalog-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	servers := make([]retrieval.Server, len(specs))
	errs := make([]error, len(specs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4) // a few servers at a time: some are heavy
	for i, s := range specs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			servers[i], errs[i] = capture(s, modules, node, filepath.Join(tmp, s.Name), timeout)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("server %s (%s): %w", s.Name, s.Package, errs[i])
			} else {
				fmt.Fprintf(os.Stderr, "capturecatalog: %s: %d tools\n", s.Name, len(servers[i].Tools))
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	nodeVersion := nodeVersionOf(node)
	cat := retrieval.Catalog{
		Source: retrieval.Source{
			Command:  command,
			Captured: time.Now().UTC().Format(time.RFC3339),
			Node:     nodeVersion,
			Note:     "Each server's tools as it listed them to mcpbridge's client (mcpclient) over stdio, without credentials or network: where a server insists on a token to start, it was given the placeholder " + placeholder + ". Schemas are stored indented; their bytes as served are the compact form (retrieval.Catalog.Tools compacts them). The capture's scratch directory, where a server mentions it, is written " + scratch + ".",
		},
		Servers: servers,
	}
	data, err := json.MarshalIndent(cat, "", "  ")
	if err != nil {
		return err
	}
	// A server that names the scratch directory would change every capture.
	data = bytes.ReplaceAll(data, []byte(tmp), []byte(scratch))
	return os.WriteFile(out, append(data, '\n'), 0o644)
}

// capture starts one server, waits for its tool list and stops it.
func capture(s spec, modules, node, tmp string, timeout time.Duration) (retrieval.Server, error) {
	srv := retrieval.Server{Name: s.Name}
	version, err := packageVersion(modules, s.Package)
	if err != nil {
		return srv, err
	}
	srv.Package = s.Package + "@" + version
	if err := os.MkdirAll(filepath.Join(tmp, "home"), 0o755); err != nil {
		return srv, err
	}
	expand := strings.NewReplacer("{tmp}", tmp, "{dummy}", placeholder).Replace
	for name, content := range s.Files {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(content), 0o600); err != nil {
			return srv, err
		}
	}
	bin, err := filepath.EvalSymlinks(filepath.Join(modules, ".bin", s.Bin))
	if err != nil {
		return srv, err
	}
	cfg := mcpclient.Config{
		ServerName:         s.Name,
		Transport:          mcpclient.TransportStdio,
		Command:            node,
		Args:               []string{bin},
		Env:                map[string]string{"HOME": filepath.Join(tmp, "home")},
		Cwd:                tmp,
		StartupTimeout:     timeout,
		FailOnStartupError: true,
		Roots:              []string{},
	}
	for _, a := range s.Args {
		cfg.Args = append(cfg.Args, expand(a))
	}
	for k, v := range s.Env {
		cfg.Env[k] = expand(v)
	}
	reg := tool.NewRegistry()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c, err := mcpclient.Start(cfg, mcpclient.Options{Registry: reg, Environ: []string{"PATH=" + filepath.Dir(node) + ":" + os.Getenv("PATH")}})
	if err != nil {
		return srv, err
	}
	defer c.Close()
	if err := c.WaitReady(ctx); err != nil {
		return srv, err
	}
	for _, t := range reg.List() {
		if t.Origin.Server != s.Name {
			continue // the bridge's own resource tools
		}
		srv.Tools = append(srv.Tools, retrieval.Tool{Name: t.Origin.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema})
	}
	slices.SortFunc(srv.Tools, func(a, b retrieval.Tool) int { return strings.Compare(a.Name, b.Name) })
	if len(srv.Tools) == 0 {
		return srv, errors.New("it listed no tools")
	}
	return srv, nil
}

func packageVersion(modules, pkg string) (string, error) {
	b, err := os.ReadFile(filepath.Join(modules, pkg, "package.json"))
	if err != nil {
		return "", err
	}
	var p struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(b, &p); err != nil || p.Version == "" {
		return "", fmt.Errorf("%s/package.json: no version (%v)", pkg, err)
	}
	return p.Version, nil
}

// nodeVersionOf returns node's --version.
func nodeVersionOf(node string) string {
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return strings.TrimSpace(string(out))
}
