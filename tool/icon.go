package tool

// Icon is an image a client may show for a tool (MCP's icons, SEP-973).
// A source hands on only icons safe to fetch or render: Src is an https:
// URL or a data: URI of an image.
type Icon struct {
	Src      string
	MimeType string   // optional
	Sizes    []string // optional, such as "48x48" or "any"
	Theme    string   // optional: "light" or "dark"
}
