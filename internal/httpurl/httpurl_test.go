package httpurl

import "testing"

func TestProblem(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://api.example/v1", ""},
		{"http://127.0.0.1:9/mcp", ""},
		{"localhost:3001/mcp", "it has no scheme: start it with http:// or https://"},
		{"127.0.0.1:9/mcp", "it has no scheme: start it with http:// or https://"},
		{"api.example/v1", "it has no scheme: start it with http:// or https://"},
		{"ftp://x/mcp", "the scheme is not http or https"},
		{"http:///mcp", "it has no host"},
		{"http://[::1", "it does not parse as a URL"},
	} {
		if got := Problem(c.in); got != c.want {
			t.Errorf("Problem(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
