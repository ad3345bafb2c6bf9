//go:build mcpbridge_engine

package gateway

// Built with -tags mcpbridge_engine, every stateful gateway serves HTTP
// through the gateway's own transport (transport.go), for
// side-by-side measurement with a binary built without it.
func init() { engineDefault = "own" }
