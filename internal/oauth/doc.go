// Package oauth authorizes the bridge's Streamable HTTP connections to MCP
// servers protected by OAuth 2.1, on the go-sdk's auth package: it builds
// the auth.OAuthHandler of one connection attempt from an entry's oauth
// block (authorization code with PKCE, client credentials with a secret or
// a private_key_jwt assertion, cross-app access), keeps tokens in a store
// under the state directory with refreshes fenced across processes, and
// says when a server needs a person to log in (NeedsLoginError) instead of
// blocking on a browser.
//
// Who does what: mcpclient builds a handler per attempt with NewHandler and
// hands it to the SDK's transport; the CLI chooses the Mode (no login,
// headless, or an interactive login through a loopback Callback, a
// browser opened by Browsers) and forgets tokens at a logout (Forget).
package oauth
