package gateway

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/tool"
)

// ServeReadOnly, as an attacker finds it with few connection slots: a POST
// declaring a body it never sends gets 405 and its connection closed at
// once, so such sockets never hold a slot; silent sockets are shed for a
// new one; a GET is served; ctx ends it.
func TestServeReadOnlyUnderAttack(t *testing.T) {
	g := newGateway(t, tool.NewRegistry(), Options{MaxConnections: 4, MaxConnsPerAddr: 4})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- g.ServeReadOnly(ctx, ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	}()
	addr := ln.Addr().String()

	var posts []net.Conn
	for range 8 { // twice the slots
		c := dialT(t, addr)
		posts = append(posts, c)
		io.WriteString(c, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 200000\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("a POST declaring an unsent body: %v", err)
		}
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("a POST: %s, Allow %q; want 405 and GET, HEAD", resp.Status, resp.Header.Get("Allow"))
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.Copy(io.Discard, c); errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatal("a refused POST's connection is still open after 5 s, want it closed at once")
		}
	}
	for range 8 {
		posts = append(posts, dialT(t, addr)) // silent: shed for the GET
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("a GET among silent sockets: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "ok" {
		t.Errorf("a GET: %s %q", resp.Status, body)
	}
	for _, c := range posts {
		c.Close()
	}
	cancel()
	if err := <-served; err != nil {
		t.Errorf("ServeReadOnly after ctx ended: %v", err)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Error("the listener still accepts after ServeReadOnly returned")
	}
}

func dialT(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
