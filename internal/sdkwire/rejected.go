package sdkwire

import "github.com/modelcontextprotocol/go-sdk/jsonrpc"

// ErrRejected matches the go-sdk's jsonrpc2.ErrRejected (assumption 40),
// which the SDK does not export: an error that wraps it, returned by a
// server connection's Write, fails that message alone (the sender gets
// the error) and leaves the connection and its session going. The SDK's
// errors match by code, so a connection of the gateway's own rejects a
// message as the SDK's transports do with fmt.Errorf("%w: …", ErrRejected).
var ErrRejected error = &jsonrpc.Error{Code: -32005, Message: "rejected by transport"}
