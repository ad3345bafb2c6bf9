// Package console is serve's web console (serve --http --console): pages
// at /console that show what the gateway is doing (its servers, tools,
// traffic and audit trail) and let a granted viewer try a tool.
//
// It keeps no state of its own beyond its viewers' sign-ins: every page
// reads the host's status, the registry, the gateway's counts and the
// audit trail file when it is rendered, and a tried tool is called through
// the gateway's own endpoint with the viewer's token, so the Gate admits,
// limits and audits it as any other call.
//
// Pages are rendered on the server with html/template (every string from
// a server or a client is escaped by context), carry a strict Content
// Security Policy (no inline script; one script file served from the
// binary), and every form is protected against cross-site requests by a
// token bound to the sign-in and a same-origin check.
package console
