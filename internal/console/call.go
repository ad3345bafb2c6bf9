package console

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"html/template"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/internal/buildinfo"
)

// callTimeout bounds one tried call.
const callTimeout = 60 * time.Second

// callResult is a tried call's result as the tool page shows it.
type callResult struct {
	Elapsed    time.Duration
	Refused    string // the gateway's JSON-RPC error, or why the call failed
	IsError    bool
	Texts      []string
	Structured string
	Images     []template.URL // data: URLs of raster images only
	Links      []string       // resource links' URIs, shown as text
	Other      []string       // other blocks' types
}

// call calls a tool through the gateway's MCP endpoint with the viewer's
// token, so the Gate decides and audits it as the viewer's call.
func (c *Console) call(ctx context.Context, si *signin, name string, args json.RawMessage) callResult {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	token := c.callToken(si)
	start := c.now()
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpbridge-console", Version: buildinfo.Version}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: c.opts.MCPURL(), DisableStandaloneSSE: true, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearerTransport{token: token}}}
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		return callResult{Elapsed: c.now().Sub(start), Refused: "connecting to the gateway: " + err.Error()}
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	out := callResult{Elapsed: c.now().Sub(start).Round(time.Millisecond)}
	if err != nil {
		c.log.Info("console try-it refused", "identity", si.viewer.Name, "tool", name, "error", err)
		out.Refused = err.Error()
		return out
	}
	c.log.Info("console try-it", "identity", si.viewer.Name, "tool", name, "isError", res.IsError)
	project(&out, res)
	return out
}

// callToken is the bearer token si's tried calls carry: the viewer's
// own, or, for the console token's holder, serve's --token-env token.
func (c *Console) callToken(si *signin) string {
	if si.viewer.Name == "console" && si.token == c.opts.Token {
		return c.opts.BearerToken
	}
	return si.token
}

// screen is the Access's view of what a caller may see: *gatewayauth.Keeper's
// gateway.Screen.
type screen interface {
	Screen(ctx context.Context, header http.Header, session string) func(gateway.Offer, string) bool
}

// visible says which tools si may see: those the gateway lists to a call
// carrying si's token (the policy's Screen); every tool without one.
func (c *Console) visible(ctx context.Context, si *signin) func(name string) bool {
	sees := c.screenOf(ctx, si)
	return func(name string) bool { return sees(gateway.OfferTool, name) }
}

// screenOf is what the policy lets si see of each kind of offer (the
// gateway's Screen for a call carrying si's token); everything without a
// Screen. Every page that names a tool, prompt or resource goes through
// it, so that what is hidden from si is on no page of theirs.
func (c *Console) screenOf(ctx context.Context, si *signin) func(gateway.Offer, string) bool {
	s, ok := c.opts.Access.(screen)
	if !ok {
		return func(gateway.Offer, string) bool { return true }
	}
	h := http.Header{}
	if token := c.callToken(si); token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	return s.Screen(ctx, h, "")
}

// project fills out from res's content blocks.
func project(out *callResult, res *mcp.CallToolResult) {
	out.IsError = res.IsError
	if res.StructuredContent != nil {
		if b, err := json.MarshalIndent(res.StructuredContent, "", "  "); err == nil {
			out.Structured = string(b)
		}
	}
	for _, block := range res.Content {
		switch b := block.(type) {
		case *mcp.TextContent:
			out.Texts = append(out.Texts, b.Text)
		case *mcp.ImageContent:
			if u, ok := imageURL(b.MIMEType, b.Data); ok {
				out.Images = append(out.Images, u)
			} else {
				out.Other = append(out.Other, "image ("+b.MIMEType+", not shown)")
			}
		case *mcp.ResourceLink:
			out.Links = append(out.Links, b.URI)
		default:
			out.Other = append(out.Other, typeName(block))
		}
	}
}

// imageURL is a data: URL of a raster image, which cannot run script;
// other types (SVG among them) are not shown.
func imageURL(mime string, data []byte) (template.URL, bool) {
	return rasterURL(mime, "data:"+mime+";base64,"+base64.StdEncoding.EncodeToString(data))
}

// rasterURL is url, a data: URL, trusted by the page's template when mime
// is a raster image type.
func rasterURL(mime, url string) (template.URL, bool) {
	switch mime {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return template.URL(url), true
	}
	return "", false
}

func typeName(block mcp.Content) string {
	b, _ := json.Marshal(block)
	var t struct {
		Type string `json:"type"`
	}
	json.Unmarshal(b, &t)
	return t.Type
}

// bearerTransport sends a bearer token on every request.
type bearerTransport struct{ token string }

func (t bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.token == "" {
		return http.DefaultTransport.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return http.DefaultTransport.RoundTrip(r)
}
