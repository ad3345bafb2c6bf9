package childproc_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/mcpbridge/mcpbridge/internal/childproc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func ExampleEnv() {
	parent := []string{"PATH=/usr/bin", "HOME=/home/u", "OPENAI_API_KEY=sk-1", "MCPBRIDGE_CONFIG=/etc/b.yaml"}
	for _, kv := range childproc.Env(parent, map[string]string{"GITHUB_TOKEN": "ghp_1"}) {
		fmt.Println(kv)
	}
	// Output:
	// GITHUB_TOKEN=ghp_1
	// HOME=/home/u
	// PATH=/usr/bin
}

// The supervisor builds one Transport per connection attempt and watches
// its Process to fail calls at once when the child dies.
func ExampleTransport() {
	ctx := context.Background()
	tr := &childproc.Transport{
		Command: "npx",
		Args:    []string{"-y", "@modelcontextprotocol/server-memory"},
		Env:     childproc.Env(os.Environ(), map[string]string{"MEMORY_FILE_PATH": "/tmp/memory.json"}),
		Stderr:  func(line string) { log.Printf("memory: %s", line) },
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpbridge", Version: "0.0.1"}, nil)
	cs, err := client.Connect(ctx, tr, nil)
	if p := tr.Process(); err != nil && p != nil {
		<-p.Exited() // close barrier: the failed child and its group are gone
	}
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	p := tr.Process()
	select {
	case <-p.Exited(): // e.g. "child "npx" (pid 4242): exit status 7"
		log.Printf("memory server (pid %d) exited: %v", p.PID(), p.ExitErr())
	case <-ctx.Done():
	}
}
