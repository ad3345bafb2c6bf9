// Package report holds the stable JSON shapes mcpbridge reports of a
// config and its servers, and builds them: list's entries and get's
// detail (what is written, the names of headers and env, never their
// values), status's servers (host.Status with the registry's counts and
// the tools' tokens), tools --tokens, and the resources, prompts and
// skills the servers offer. Fields are only ever added
// (docs/decisions.md §7).
package report
