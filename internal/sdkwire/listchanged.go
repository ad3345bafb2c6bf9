package sdkwire

import "github.com/modelcontextprotocol/go-sdk/mcp"

// ToolListChanged is the notification a server sends when its tool list
// changed.
const ToolListChanged = "notifications/tools/list_changed"

// DropNotification is what a server's sending middleware returns to drop
// a notification for the one session it was going to: nothing is written
// to that session, and the SDK goes on with the others (assumption 22).
func DropNotification() (mcp.Result, error) { return nil, nil }
