package mcpclient

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/mcpbridge/mcpbridge/tool"
)

// Icons of a tool (MCP 2025-11-25, SEP-973) are fetched or rendered by
// whoever shows them, so a server may only point at https: URLs or carry
// data: images; anything else (http:, file:, javascript:, a relative
// path) is dropped, with a log line for the tool. They are bounded so a server cannot
// make the bridge hold an arbitrary amount of image data.
const (
	maxIcons     = 8
	maxIconBytes = 64 << 10 // one src, in bytes
)

// wireIcon is an icon as a server sends it.
type wireIcon struct {
	Src      string   `json:"src"`
	MimeType string   `json:"mimeType"`
	Sizes    []string `json:"sizes"`
	Theme    string   `json:"theme"`
}

// iconVerdict says why an icon src is refused, or "" when it is kept.
func iconVerdict(src string) string {
	if len(src) > maxIconBytes {
		return fmt.Sprintf("src is %d bytes, over %d", len(src), maxIconBytes)
	}
	if rest, ok := strings.CutPrefix(src, "data:"); ok {
		if !strings.HasPrefix(strings.ToLower(rest), "image/") || !strings.Contains(rest, ",") {
			return "a data: URI that is not an image"
		}
		return ""
	}
	u, err := url.Parse(src)
	if err != nil {
		return "not a URL"
	}
	if !strings.EqualFold(u.Scheme, "https") || u.Host == "" {
		return "neither an https: URL nor a data: image"
	}
	return ""
}

// icons returns the icons of tool rawName that may be carried. What it
// drops is logged in one line (how many, the first one's reason and src),
// when the last sync did not log it already (warnDef). raw is the tool's
// "icons" member, possibly absent.
func (s *Server) icons(rawName string, raw json.RawMessage) []tool.Icon {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		s.warnDef(kindTools, "icons dropped", "tool", rawName, "reason", "icons is not an array")
		return nil
	}
	var out []tool.Icon
	dropped, first, firstSrc := 0, "", ""
	for _, r := range list {
		var w wireIcon
		reason := ""
		if err := json.Unmarshal(r, &w); err != nil {
			reason = "not an icon object"
		} else if reason = iconVerdict(w.Src); reason == "" && len(out) == maxIcons {
			reason = fmt.Sprintf("more than %d icons", maxIcons)
		}
		if reason != "" {
			if dropped++; dropped == 1 {
				first, firstSrc = reason, shortSrc(w.Src)
			}
			continue
		}
		out = append(out, tool.Icon{Src: w.Src, MimeType: w.MimeType, Sizes: w.Sizes, Theme: w.Theme})
	}
	if dropped > 0 {
		s.warnDef(kindTools, "icons dropped", "tool", rawName, "dropped", dropped, "of", len(list), "reason", first, "src", firstSrc)
	}
	return out
}

// shortSrc keeps a log line short: a data: URI can be long.
func shortSrc(src string) string {
	const keep = 80
	if len(src) <= keep {
		return src
	}
	return src[:keep] + "…"
}
