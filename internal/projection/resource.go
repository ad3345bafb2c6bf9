package projection

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// ResourceContents maps a resources/read result to its text blocks, one
// per content item: a text item's text, a blob as a note of its URI, media
// type and decoded size (a model or a terminal gets no base64). It fails
// only when raw is not a resources/read result object.
func ResourceContents(raw json.RawMessage) ([]string, error) {
	var res struct {
		Contents []json.RawMessage `json:"contents"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("resources/read result: %w", err)
	}
	out := make([]string, 0, len(res.Contents))
	for _, c := range res.Contents {
		out = append(out, resourceItem(c))
	}
	return out, nil
}

// resourceItem is one resource contents item's text.
func resourceItem(raw json.RawMessage) string {
	var c struct {
		URI      string  `json:"uri"`
		MIMEType string  `json:"mimeType"`
		Text     *string `json:"text"`
		Blob     *string `json:"blob"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return "[resource contents unavailable: not an object with string fields]"
	}
	mime := showMediaType([]byte(jsonString(c.MIMEType)))
	switch {
	case c.Text != nil:
		return *c.Text
	case c.Blob != nil:
		b, err := base64.StdEncoding.DecodeString(*c.Blob)
		if err != nil {
			return fmt.Sprintf("[binary resource %s: %s, its blob is not valid base64]", c.URI, mime)
		}
		return fmt.Sprintf("[binary resource %s: %s, %s]", c.URI, mime, byteSize(len(b)))
	default:
		return fmt.Sprintf("[resource %s has neither text nor blob]", c.URI)
	}
}

// PromptMessage maps one prompts/get message's content block to its text:
// an embedded resource as a read resource shows, any other block as in a
// tools/call result.
func PromptMessage(content json.RawMessage) string {
	var embedded struct {
		Type     string          `json:"type"`
		Resource json.RawMessage `json:"resource"`
	}
	if json.Unmarshal(content, &embedded) == nil && embedded.Type == "resource" && len(embedded.Resource) > 0 {
		return resourceItem(embedded.Resource)
	}
	wrapped := make([]byte, 0, len(content)+len(`{"content":[]}`))
	wrapped = append(wrapped, `{"content":[`...)
	wrapped = append(wrapped, content...)
	wrapped = append(wrapped, "]}"...)
	res, err := Project(wrapped, Options{RawName: "prompt"})
	if err != nil || !json.Valid(content) {
		return "[prompt message unavailable: its content is not a JSON object]"
	}
	return res.Text
}

// jsonString encodes s as a JSON string ("" stays the empty string).
func jsonString(s string) string {
	if s == "" {
		return ""
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// byteSize shows n bytes for a person: "512 B", "1.2 KB", "3.4 MB".
func byteSize(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
}
