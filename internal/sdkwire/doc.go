// Package sdkwire holds the bridge's work beneath the go-sdk
// (github.com/modelcontextprotocol/go-sdk, v1.8.0): everything that relies
// on how the SDK behaves rather than on what its API promises. Nothing
// outside this package may rely on such behaviour; a new reliance comes
// here, with its entry in the list below and a contract test.
//
// What it offers:
//
//   - raw-result capture keyed by JSON-RPC request id, at the message level
//     ([CaptureTransport]) or the HTTP level ([CaptureRoundTripper]), with a
//     [Slot] per call in the call's context and a [Table] per connection:
//     the bridge passes tools/call results and tool schemas through byte for
//     byte, which the SDK's typed decoding cannot do (it rejects a whole
//     result for one unknown content block, and re-orders schema keys);
//   - tools/list pages handed to the SDK with only the tools that may carry
//     x-mcp-header annotations ([HeaderToolsPage], [HeaderCandidate]), and
//     the reasons the SDK gives for dropping tools ([ClientLogger],
//     [ToolDrops]);
//   - round trippers that watch a Streamable HTTP connection for what the
//     SDK does not report ([FailureWatch], [StreamWatch]);
//   - [ProbeTransport], which bounds the wait for an answer to the
//     server/discover probe on a stream connection;
//   - [LeanConn], a stdio connection that reads as the SDK's does at a
//     fraction of its cost;
//   - on the server side (the gateway's work beneath the SDK, under the
//     same rule): tools/call results whose content goes on the wire as
//     raw bytes ([RawResult]) and input-required results that ask the
//     client ([InputRequiredResult]); the count of requests a session's connection has
//     read and not yet answered, which its Close would drop
//     ([CountingTransport]); a stdio reader and writer that keep a session
//     going past a line that is not a JSON-RPC message ([LineFilter],
//     [LockedWriter]); the requests whose handlers park until
//     cancelled ([ParksUntilCancelled]); tools list_changed kept from the
//     sessions not owed one ([DropNotification]); and requests answered
//     beneath the server session, on its connection ([TakingTransport]),
//     which a server's own Streamable HTTP transport routes by request
//     ([TakenRequest]) and whose writes it may reject one by one
//     ([ErrRejected]); what those paths read and write is package
//     serverwire's, compared with the SDK's under "Parity checks" below;
//     and a session kept at the protocol version its initialize was
//     answered, not the one asked for ([NegotiateInitialize]);
//   - requests the SDK has no method for, sent as rewritten CallTool
//     requests ([Rewrite], [NewRewriteSlot]).
//
// # Assumptions
//
// Each is checked against the real SDK by the test named after it; a test
// that fails after an SDK upgrade names the assumption that broke.
//
//  1. The context given to a ClientSession method (CallTool, ListTools)
//     reaches Connection.Write with the request, values intact.
//     TestContractContextReachesWrite.
//  2. The SDK decodes the message Connection.Read returns, so a wrapping
//     connection may change a *jsonrpc.Response in place (its Result, or
//     its Result for an Error). TestContractReadIsDecoded.
//  3. CallTool returns a tools/call answered with an error response as an
//     error wrapping that *jsonrpc.Error (errors.As finds it), on either
//     protocol, without decoding anything (a result is decoded twice over
//     with a fresh 32 KiB-buffer decoder), and the session goes on: so
//     [CapturedCall] hands the SDK an error in place of a captured result.
//     TestContractCapturedCall.
//  4. The Streamable HTTP client POSTs each request with its call's context,
//     values intact, and one JSON-RPC message as the body.
//     TestContractHTTPPost.
//  5. The Streamable HTTP client's connection must not be wrapped: the
//     session tells it the negotiated version through an unexported method
//     a wrapper hides, and a wrapped one then neither opens the standalone
//     GET stream nor sends Mcp-Protocol-Version (older protocols). The
//     transport's HTTPClient sees every request instead.
//     TestContractHTTPConnectionNotWrappable.
//  6. The Streamable HTTP client reads the response to a POST from an
//     application/json body or from the data lines of a text/event-stream
//     body, so rewriting them beneath it changes what it decodes; it
//     reads the Content-Type as a media type (mime.ParseMediaType: any
//     case, any spacing). TestContractHTTPResponseBodies.
//  7. On protocol 2026-07-28 the client opens subscriptions/listen as a POST
//     with the header "Mcp-Method: subscriptions/listen" and never opens it
//     again after it ends; on older protocols it opens a standalone GET
//     stream and opens it again after it ends. The session's own listen
//     stream (list changes) names no resource in its params
//     (notifications.resourceSubscriptions); Subscribe opens one more
//     listen POST per resource, naming that one URI, with a context
//     Unsubscribe cancels, and the session's Close cancels its own.
//     TestContractHTTPListenStream, TestContractHTTPStandaloneGET,
//     TestContractHTTPSubscriptionStreams.
//  8. A POST failing at the transport level fails only its call: the
//     session lives on, and on protocol 2026-07-28 ClientSession.Wait does
//     not return. TestContractHTTPTransportError.
//  9. ListTools returns the tools of the page it was handed; on protocol
//     2026-07-28 it caches that page by cursor and answers from the cache,
//     without a request, while the page's ttlMs lasts.
//     TestContractListToolsCache.
//  10. ListTools drops a tool with invalid x-mcp-header annotations, and logs
//     "excluding tool from tools/list" with the attributes "tool" and
//     "error" on ClientOptions.Logger. TestContractInvalidHeaderToolDropped.
//  11. CallTool mirrors x-mcp-header arguments as Mcp-Param-* headers only
//     for a tool ListTools returned (and cached) on the same session; without
//     it a stateless go-sdk server refuses the call with -32020 (header
//     mismatch). TestContractParamHeaders.
//  12. jsonrpc.DecodeMessage is how the SDK decodes one message (its
//     connections, in-memory and stdio, decode with it; the HTTP client too),
//     and the params or result of a message it decoded is valid JSON. The
//     package's decoder gives the same message or error for every input.
//     FuzzDecodeMessage. Likewise jsonrpc.EncodeMessage is how it encodes
//     one, and [EncodeMessage] gives the same bytes or error for every
//     message. TestEncodeMessage, FuzzEncodeMessage.
//  13. mcp.IOTransport's connection (which mcp.CommandTransport uses) reads
//     JSON values off the stream with a json.Decoder, fails on anything but
//     a line end right after a value, tries each value as a batch first and
//     tracks batched requests; LeanConn reads every stream alike. Its
//     client side is never told the negotiated protocol version, so it
//     accepts batches on every version. FuzzLeanConn,
//     TestContractClientBatches.
//  14. The server marshals the mcp.Result a receiving middleware returns
//     with encoding/json (HTML characters unescaped), so the result's own
//     MarshalJSON decides its bytes; on protocol 2026-07-28 it stamps
//     resultType and _meta (serverInfo) on that result through methods a
//     type embedding *mcp.CallToolResult inherits, so they land on the
//     embedded value. TestContractRawResult. The same holds for a
//     tools/list result ([ToolsWithExecution]).
//     TestContractToolsWithExecution.
//  15. A server session reads every request through Connection.Read and
//     writes its response through Connection.Write with the request's id,
//     whether the handler succeeds, fails with a protocol error or was
//     cancelled by the client. ServerSession.Close waits for the handlers
//     in flight and drops their replies: they never reach Write (a write
//     failing once Close began, such as a server ping's, also cancels the
//     handlers in flight).
//     TestContractCallsAnsweredOnConnection, TestContractCloseDropsReplies
//     (and, for ping and prompts/get, TestParityRepeatedIDUnanswered).
//  16. mcp.IOTransport ends a server session at the first line that is not
//     a JSON-RPC message or a non-empty batch of them (invalid JSON, a
//     value jsonrpc.DecodeMessage refuses, a line longer than
//     MaxLineLength), and reads a line of MaxLineLength bytes; the SDK
//     writes each frame, message or batch, in one Write call ending in a
//     newline. TestContractStdioBadLine, TestContractStdioFrameWrites.
//  17. The handler of a subscriptions/listen request (protocol 2026-07-28)
//     runs beneath the receiving middleware and parks until the context the
//     middleware passes on is cancelled. ServerSession.Close waits for it,
//     and cancels only the listens it knew of when it began: one read
//     before Close and handled after parks Close until something else
//     cancels it. TestContractListenParks, TestContractListenMissedByClose.
//  18. On protocol 2026-07-28 the client falls back from server/discover to
//     initialize (2025-11-25) when discover fails with -32601, so
//     [ProbeTransport]'s own answer to a probe the server ignores ends the
//     handshake in a bound. TestContractSilentDiscoverFallback.
//  19. mcp.SSEClientTransport (the legacy HTTP+SSE transport) opens its GET
//     stream, which carries every server message of the session, with the
//     context given to Connect: when that context ends, the session ends.
//     [LifetimeConnect] gives the stream the connection's lifetime.
//     TestContractSSEStreamOnConnectContext.
//  20. The client's multi round-trip middleware (protocol 2026-07-28)
//     answers an input-required result of tools/call, prompts/get or
//     resources/read through the client's handlers, with the call's own
//     context, and sends the call again as a new request in that context:
//     a captured call's slot is filled by the round whose result is
//     complete, so the capture passes input-required results to the SDK
//     untouched (InputRequired). TestContractMultiRoundTrip.
//  21. The Streamable HTTP client hands a POST answered 401 to its
//     OAuthHandler's Authorize and wraps the error Authorize returns (%w)
//     in the error of the request, so Connect's error tells a server that
//     needs a login (internal/oauth.NeedsLoginError). A token source that
//     fails with an *oauth2.RetrieveError of code invalid_grant sends the
//     request without Authorization (the 401 then leads to a new
//     authorization); any other token source error fails the request
//     unsent. TestContractOAuthHandler.
//  22. Server.AddTool of a tool the server lists already, even unchanged,
//     makes the SDK send notifications/tools/list_changed (debounced) to
//     each session: every legacy one, and on 2026-07-28 each listening for
//     it. Each goes through the sending middleware with that session as
//     the request's session, and a middleware that returns
//     [DropNotification] without calling next keeps it from that session
//     alone. The gateway tells one client session that its tool view grew
//     this way (the SDK has no call that notifies one session).
//     TestContractToolListChangedPerSession.
//  25. A server session needs to see none of the calls its connection
//     answers itself ([TakingTransport]): it keeps serving the other
//     requests, the body's notifications and requests through the session
//     reach the client (a notification written before the response
//     arrives before it), and the SDK's canceller ignores a
//     notifications/cancelled it was not given. The session closes its
//     connection from inside the jsonrpc2 connection's state lock, which
//     its notifications also take, so the connection's Close must not
//     wait for the calls it took; the SDK cancels its own calls and drops
//     their replies when reading fails, and the taken ones get the same.
//     TestContractTakenCalls, TestContractTakenCallsEnd.
//  26. The SDK's tools/call dispatch stamps "resultType":"complete" on a
//     handler's final result exactly on the sessions [TakesCalls] refuses
//     (2026-07-28 or later, or no initialize), and a receiving middleware
//     that answers tools/call itself skips that dispatch: [RawResult]
//     stamps it in its place. TestContractResultType.
//  27. A request CallTool sends may be rewritten beneath the SDK into
//     another method with other params ([NewRewriteSlot]: tasks/get,
//     tasks/result, tasks/cancel, and tools/call with a "task" field, none
//     of which go-sdk sends), keeping the _meta the SDK wrote and, over
//     Streamable HTTP, with Mcp-Method naming the new method: the
//     captured result reaches the slot, the SDK decodes none of it, and
//     the session goes on. TestContractRewrittenRequest,
//     TestContractRewrittenRequestHTTP.
//  28. The client writes initialize through Connection.Write with its
//     capabilities under params.capabilities, and a server reads the
//     capabilities a wrapping connection adds there ([CapabilityTransport]:
//     the 2025-11-25 "tasks" capability, which ClientCapabilities lacks).
//     The same wrapper over [TakingTransport] on the client side answers
//     the server's requests beneath the client session.
//     TestContractCapabilityAdded.
//  29. On protocol 2026-07-28 the client answers a list or resources/read
//     request from its cache while the last result's ttlMs lasts, whatever
//     its cacheScope, and keeps nothing of a result with ttlMs 0: a
//     private result handed to the SDK with ttlMs 0 is read again on the
//     next request ([PassResult] slots). TestContractPrivateNotCached.
//  30. The server reads initialize through Connection.Read and writes its
//     result through Connection.Write with the request's id, its
//     capabilities an object under result.capabilities; a client reads
//     the capabilities a wrapping connection adds there
//     ([ServerCapabilityTransport]: the 2025-11-25 "tasks" capability,
//     which ServerCapabilities lacks), and the session goes on.
//     TestContractServerCapabilityAdded.
//  32. A receiving middleware that answers a tools/call of a 2026-07-28
//     session with [InputRequiredResult] reaches the client as an
//     input-required result (resultType, inputRequests as written,
//     requestState, no content); the client's multi round-trip middleware
//     answers its requests through the client's handlers and calls again
//     with the answers under the same keys and the requestState, which
//     the server's middleware reads from CallToolParamsRaw
//     (InputResponses decoded by their shape). The gateway asks its
//     2026-07-28 clients this way. TestContractInputRequiredResult.
//  39. A server session writes what a handler sends with a context (a
//     notification, a request to the client) through Connection.Write
//     with a context derived from the handler's, so a connection that
//     routes by request finds a taken call there ([TakenRequest], with
//     [TakingTransport].Routes). The gateway's own HTTP transport
//     routes so (docs/engine.md). TestContractTakenCallRoutes.
//  40. A server connection's Write that fails with an error wrapping the
//     SDK's jsonrpc2 ErrRejected (unexported; its errors match by code,
//     -32005: [ErrRejected]) fails that message alone: its sender gets
//     the error and the session goes on; any other write error ends the
//     session. The gateway's own HTTP transport rejects so what belongs
//     to a request already answered and a stateless session's requests
//     to its client, as the SDK's transport does.
//     TestContractRejectedWriteFailsAlone.
//  41. A server answers an initialize with the protocol version asked for
//     when it supports it and it is before 2026-07-28, else the newest it
//     supports before 2026-07-28 ([NegotiateInitialize] makes the same),
//     yet keeps as the session's InitializeParams the version asked for;
//     the params it keeps are those its receiving middleware was handed,
//     so a version [NegotiateInitialize] set there is what the session
//     keeps (and [TakesCalls], the SDK's own checks, read).
//     TestContractInitializeKeepsRequestedVersion.
//  42. A list page's nextCursor names the unique id of the page's last
//     item (a tool's or prompt's name, a resource's URI, a template's URI
//     template), in base64 that anyone can decode ([PageCursor] makes
//     the same), and a page asked with a cursor starts past the id it
//     names, whether or not an item has it. TestContractPageCursor.
//  43. A client's Connection.Write that returns its context's error once
//     that context ended fails that call alone: CallTool returns the
//     error and the session goes on. So [LeanConn]'s Write returns when
//     its context ends though the peer does not read, and writes the line
//     on, whole, in the background. TestContractWriteEndsWithContext.
//
// Numbers are not reused: 23, 24 and 33 to 38 were assumptions while the
// gateway answered beneath the SDK's Streamable HTTP handler; the
// gateway's own paths now write those bytes themselves (package
// serverwire), and they are the parity checks P1 to P8 below. 31 (the
// handler's answer to initialize, to which a response writer added the
// "tasks" capability) went with the tasks answered in front of that
// handler: an HTTP session's connection adds it as stdio's does (30).
//
// Of the assumptions above, three exist only for the gateway's own paths
// (its connection-level take and its Streamable HTTP transport): 25, 39
// and 40. The rest hold for every path through the SDK.
//
// # Parity checks
//
// What the gateway's own paths write (package serverwire) is compared,
// side by side, with what the SDK's server and Streamable HTTP handler
// write for the same exchange, by the test named after each. The gateway
// does not rely on them: its bytes are the protocol's either way, and a
// failure after an SDK upgrade says the reference moved. The gateway's
// own tests compare its whole transport with the SDK's handler too
// (gateway.sdkReference).
//
//   - P1. On a server session opened with initialize at a protocol before
//     2026-07-28 ([TakesCalls]), the SDK sends the result a tools/call
//     middleware returns as [RawResult] as {"content":…} (the raw
//     array), then "isError":true when set, then "structuredContent" with
//     its HTML characters escaped (json.Marshal of the typed result), and
//     nothing else; the connection's encoding compacts it. At 2026-07-28
//     or later it adds resultType (and _meta on per-request sessions).
//     TestParityTakenCallResult.
//   - P2. The SDK's server hands a tools/call handler the params
//     {name, arguments, _meta} as [serverwire.ReadCallParams] reads them: the name,
//     the arguments byte for byte as the client wrote them, the _meta
//     decoded as encoding/json decodes a map (a repeated key keeps the
//     last value). TestParityCallParams.
//   - P3. The Streamable HTTP handler answers a POST that carries one
//     tools/call with the headers [serverwire.SetResponseHeaders] sets and, as an SSE
//     stream, [serverwire.AppendEvent] frames: a priming event first where [serverwire.Primes]
//     says (an event store, 2025-11-25 up to 2026-07-28), event ids
//     [serverwire.EventID](stream, index) with an event store and none without, then
//     the message [serverwire.ResponseJSON] encodes; with JSONResponse, that message
//     alone as the body. The result is [serverwire.CallResultJSON] on the sessions
//     [TakesCalls] accepts, stateful or stateless, as on stdio
//     (P1). TestParityHTTPCallResponse. The notifications a
//     session sends on a POST's stream are what [serverwire.NotificationJSON]
//     encodes (checked through the gateway's transport, against the
//     SDK's handler: gateway.TestHTTPTakenBytesAsSDK).
//   - P4. A server session (protocol before 2026-07-28) sends a log message
//     through Log exactly when [serverwire.LogPasses] says for its level and the one
//     the client last set with logging/setLevel: none before the client
//     sets one. TestParityLogPasses.
//   - P5. Over stateful Streamable HTTP, a POST without Mcp-Session-Id that
//     does not initialize is served on a session of its own, with an id
//     and no initialize params, closed when that request ends
//     ([serverwire.OneRequestSession]: the gateway neither counts nor evicts for
//     it). TestParityOneRequestSession.
//   - P6. Over stateless Streamable HTTP, a POST below 2026-07-28 that
//     carries a call is served on a session made for it alone: no id
//     (whatever Mcp-Session-Id says), initialize params of the POST's
//     version only (no client info, no capabilities), log messages sent
//     from [serverwire.OneRequestLogLevel] up, every request to its client refused
//     ("rejected by transport: stateless servers cannot make
//     requests"); its response is the SSE stream of
//     P3 without an event store (no priming event, no event
//     ids) and sets no Mcp-Session-Id. A server that answers such a call
//     beneath the handler gives it no more. TestParityOneRequestStateless.
//   - P7. Over stateless Streamable HTTP, a 2026-07-28 tools/call whose
//     params [serverwire.ReadPerRequestCall] reads (a client offering at
//     most roots, sampling and elicitation) is served on a session made
//     for it alone, whose initialize params are what the request's _meta
//     says ([serverwire.ClientMeta]: the version, the clientInfo's name,
//     the capabilities as ClientMeta decodes them); log messages go out from the
//     _meta's level up (none without one), every request to the client
//     is refused with [serverwire.PerRequestAskError]; a [RawResult] reaches the
//     client as [serverwire.CallResultJSONPerRequest] names the server
//     ([serverwire.ServerInfoJSON]), on an SSE stream without priming or event ids;
//     an error the handler maps to an HTTP status ([serverwire.ErrorStatus]) is
//     written as one application/json body with that status after the SSE
//     headers, any other error on the stream as a result would be.
//     TestParityPerRequestStateless.
//   - P8. Over stateful Streamable HTTP, the SDK's handler refuses a POST one
//     of whose requests has the id of a request of the session still in
//     flight, before serving any of them: status 400 and one
//     application/json body, the error (invalid request) "duplicate
//     in-flight request ID <id>" (the gateway's transport refuses so).
//     TestParityDuplicateIDRefused.
//   - P9. Over Streamable HTTP, a 2026-07-28 tools/call of a tool whose
//     input schema annotates arguments with x-mcp-header is refused,
//     status 400 and the header mismatch error (-32020), exactly when
//     [serverwire.ParamHeadersProblem] finds its Mcp-Param-* headers
//     saying other than its arguments, and in its words (the gateway's
//     transport checks them before any path serves the call).
//     TestParityParamHeaders.
//   - P10. On a stdio-like session, the SDK's server session leaves
//     unanswered a request whose id is that of a request it has in
//     flight, whatever its method (its jsonrpc2 connection drops it, so
//     that no answer with that id reaches the client but the first
//     request's), and serves the id again once that answer is written.
//     [TakingTransport] leaves such a repeat unanswered itself, whichever
//     path has the id in flight: it tells the calls it left to the
//     session by their responses' writes (15).
//     TestParityRepeatedIDUnanswered.
package sdkwire
