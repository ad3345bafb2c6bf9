package mcppeer

// The tests are the external package mcppeer_test, so that they can use
// internal/mcptest (which imports this package); these give them the
// unexported pieces they test.
var (
	RunChild     = runChild
	FormatNumber = formatNumber
)

// Handle is handle, the answer to one JSON-RPC message.
func (s *RawServer) Handle(msg []byte) (reply []byte, after func()) { return s.handle(msg) }
