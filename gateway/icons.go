package gateway

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// The gateway serves a tool's icons as its source carried them: a source
// hands on only safe ones (mcpclient keeps https: and data: images).

// mcpIcons is icons as the SDK lists them; nil for none.
func mcpIcons(icons []tool.Icon) []mcp.Icon {
	if len(icons) == 0 {
		return nil
	}
	out := make([]mcp.Icon, len(icons))
	for i, ic := range icons {
		out[i] = mcp.Icon{Source: ic.Src, MIMEType: ic.MimeType, Sizes: ic.Sizes, Theme: mcp.IconTheme(ic.Theme)}
	}
	return out
}

// iconsKey is a comparable form of icons, so a change of icons alone
// re-lists the tool.
func iconsKey(icons []tool.Icon) string {
	if len(icons) == 0 {
		return ""
	}
	b, _ := json.Marshal(icons)
	return string(b)
}
