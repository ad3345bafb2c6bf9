// Package pin records the definitions of a server's tools and prompts and
// tells which of them changed since: the lock file (mcpbridge.lock) a
// reviewer reads in a diff, and the Book an mcp-client consults at every
// sync so that a definition that changed under the user's feet (a "rug
// pull") is withheld before it reaches the registry.
//
// A definition is pinned by its canonical JSON (name, title, description,
// inputSchema, outputSchema and annotations for a tool; name, title,
// description and arguments for a prompt; object keys sorted, numbers as
// written) and that text's SHA-256.
package pin
