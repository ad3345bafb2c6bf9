package tool_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/tool"
)

func TestResultJSON(t *testing.T) {
	tests := []struct {
		name string
		in   tool.Result
		want string
	}{
		{
			name: "success with value",
			in: tool.Result{
				Content: []tool.Content{tool.Text("hi")},
				Value:   json.RawMessage(`{"content":[{"type":"text","text":"hi"}],"structuredContent":{"a":1}}`),
			},
			want: `{"isError":false,"content":[{"type":"text","text":"hi"}],"value":{"content":[{"type":"text","text":"hi"}],"structuredContent":{"a":1}}}`,
		},
		{
			name: "success without value",
			in:   tool.Result{Content: []tool.Content{tool.Text("hi")}},
			want: `{"isError":false,"content":[{"type":"text","text":"hi"}]}`,
		},
		{
			name: "tool failure has no code",
			in: tool.Result{
				IsError: true,
				Content: []tool.Content{tool.Text("Error: boom")},
				Error:   &tool.ErrorInfo{Message: "boom"},
			},
			want: `{"isError":true,"content":[{"type":"text","text":"Error: boom"}],"error":{"message":"boom"}}`,
		},
		{
			name: "harness failure has a code",
			in: tool.Result{
				IsError: true,
				Content: []tool.Content{tool.Text(`Error: unknown tool "x"`)},
				Error:   &tool.ErrorInfo{Message: `unknown tool "x"`, Code: tool.CodeUnknownTool},
			},
			want: `{"isError":true,"content":[{"type":"text","text":"Error: unknown tool \"x\""}],"error":{"message":"unknown tool \"x\"","code":"UNKNOWN_TOOL"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("JSON mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResultText(t *testing.T) {
	tests := []struct {
		name    string
		content []tool.Content
		want    string
	}{
		{name: "none", want: ""},
		{name: "one", content: []tool.Content{tool.Text("a b")}, want: "a b"},
		{name: "several", content: []tool.Content{tool.Text("a"), tool.Text(""), tool.Text("c\n")}, want: "a\n\nc\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tool.Result{Content: tt.content}.Text()); diff != "" {
				t.Errorf("Text() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestText(t *testing.T) {
	if diff := cmp.Diff(tool.Content{Type: "text", Text: "x"}, tool.Text("x")); diff != "" {
		t.Errorf("Text(x) mismatch (-want +got):\n%s", diff)
	}
}
