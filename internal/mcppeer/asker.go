//lint:file-ignore SA1019 sampling is deprecated as of MCP 2026-07-28 but carried by the bridge; the asker uses it the 2025-11-25 way.

package mcppeer

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// OrderSchema is the form the asker's order tool elicits: a string, an
// integer with bounds and a default, a titled single-select (SEP-1330
// oneOf), a boolean, and an untitled multi-select.
const OrderSchema = `{"type":"object","properties":{
 "name":{"type":"string","title":"Name","description":"who the order is for","minLength":2},
 "quantity":{"type":"integer","title":"Quantity","minimum":1,"maximum":10,"default":1},
 "size":{"type":"string","title":"Size","oneOf":[{"const":"s","title":"Small"},{"const":"m","title":"Medium"},{"const":"l","title":"Large"}],"default":"m"},
 "gift":{"type":"boolean","title":"Gift wrap","default":false},
 "extras":{"type":"array","title":"Extras","items":{"type":"string","enum":["cheese","olives","basil"]}}
},"required":["name","size"]}`

// Asker is a go-sdk server whose tools ask their client things in the
// middle of a call, the protocol 2025-11-25 way (a request on the
// session; configs pin protocolVersion: 2025-11-25):
//
//   - order → elicits [OrderSchema]; answers "<action>" and, when
//     accepted, the content as JSON with sorted keys;
//   - consent → elicits a URL (https://example.com/consent?x=1); answers
//     the action;
//   - weather {city} → asks for a completion (sampling with one tool,
//     get_weather); when the model uses it, answers the tool_result
//     ("sunny in <city>") in a second request, and returns the model's last
//     text as "model: <text>".
func Asker() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1.0.0"}, nil)
	object := json.RawMessage(`{"type":"object"}`)
	s.AddTool(&mcp.Tool{Name: "order", Description: "Takes an order, asking for it.", InputSchema: object}, askOrder)
	s.AddTool(&mcp.Tool{Name: "consent", Description: "Asks for consent on a web page.", InputSchema: object}, askConsent)
	s.AddTool(&mcp.Tool{Name: "weather", Description: "Asks a model about the weather.", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}, askWeather)
	return s
}

func askOrder(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "What would you like?", RequestedSchema: json.RawMessage(OrderSchema)})
	if err != nil {
		return nil, err
	}
	if res.Action != "accept" {
		return textResult(res.Action), nil
	}
	b, _ := json.Marshal(res.Content) // map keys sorted
	return textResult("accept " + string(b)), nil
}

func askConsent(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
		Mode: "url", Message: "Please agree to the terms.", URL: "https://example.com/consent?x=1", ElicitationID: "consent-1",
	})
	if err != nil {
		return nil, err
	}
	return textResult(res.Action), nil
}

// weatherTool is the tool the asker offers the model.
var weatherTool = &mcp.Tool{
	Name: "get_weather", Description: "The weather in a city.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
}

func askWeather(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct{ City string }
	_ = json.Unmarshal(req.Params.Arguments, &args)
	msgs := []*mcp.SamplingMessageV2{{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: "What is the weather in " + args.City + "?"}}}}
	params := &mcp.CreateMessageWithToolsParams{
		SystemPrompt: "You answer briefly.", MaxTokens: 200, Messages: msgs,
		Tools: []*mcp.Tool{weatherTool}, ToolChoice: &mcp.ToolChoice{Mode: "auto"},
	}
	res, err := req.Session.CreateMessageWithTools(ctx, params)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(res.Content, func(c mcp.Content) bool { _, ok := c.(*mcp.ToolUseContent); return ok })
	if i >= 0 {
		use := res.Content[i].(*mcp.ToolUseContent)
		params.Messages = append(params.Messages,
			&mcp.SamplingMessageV2{Role: "assistant", Content: res.Content},
			&mcp.SamplingMessageV2{Role: "user", Content: []mcp.Content{&mcp.ToolResultContent{
				ToolUseID: use.ID, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("sunny in %v", use.Input["city"])}},
			}}})
		if res, err = req.Session.CreateMessageWithTools(ctx, params); err != nil {
			return nil, err
		}
	}
	var text []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			text = append(text, t.Text)
		}
	}
	return textResult(fmt.Sprintf("model %s (%s): %s", res.Model, res.StopReason, strings.Join(text, " "))), nil
}
