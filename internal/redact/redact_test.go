package redact

import (
	"errors"
	"io"
	"testing"
)

func TestURLs(t *testing.T) {
	tests := []struct{ in, want string }{
		{`Post "http://h:1/mcp/pathsecret?api_key=q": refused`, `Post "http://h:1/…": refused`},
		{"https://user:pw@example.com/", "https://example.com/…"},
		{"http://127.0.0.1:7410", "http://127.0.0.1:7410"},
		{"http://127.0.0.1:7410/", "http://127.0.0.1:7410/"},
		{"no url here", "no url here"},
		{"x://", "x://"},
		// As written in a config, the host a ${VAR} reference.
		{`Post "https://${HOST}/mcp?key=s3cret": refused`, `Post "https://${HOST}/…": refused`},
		{"https://${HOST}/…", "https://${HOST}/…"},
		{"https://${HOST}", "https://${HOST}"},
		{"https://u:${PW}@${HOST}:8080/", "https://${HOST}:8080/…"},
	}
	for _, tc := range tests {
		if got := URLs(tc.in); got != tc.want {
			t.Errorf("URLs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestError(t *testing.T) {
	if Error(nil) != nil {
		t.Error("nil")
	}
	plain := errors.New("plain")
	if Error(plain) != plain {
		t.Error("an error without URLs was wrapped")
	}
	err := Error(errors.Join(io.EOF, errors.New(`Get "http://h/mcp?token=s3cret"`)))
	if err.Error() != "EOF\nGet \"http://h/…\"" || !errors.Is(err, io.EOF) {
		t.Errorf("%q", err)
	}
}
