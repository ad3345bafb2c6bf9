// Package gatewayauth is what the gateway entry of a config file sets: who may
// call `mcpbridge serve`, what each caller may see and use, how often,
// and the record of it. The gateway defines the seams (gateway.Gate,
// gateway.Screen, Options.Authenticate, Options.WellKnown); Keeper fills
// them, and serve wires it in:
//
//   - Verifier checks bearer tokens: named static tokens, and JWTs of one
//     issuer signed by a key of its JWKS (discovered by RFC 8414 or OpenID
//     Connect, cached, refreshed on an unknown kid at a bounded rate);
//   - Policy decides by ordered rules (subjects, groups, CEL over the
//     claims and the name asked for): a deny of any matching rule wins,
//     then the first matching rule that grants, deny by default;
//   - rate limits are token buckets per identity (or identity and tool);
//   - the audit trail is package audit's hash-chained JSON lines.
//
// Decode reads an entry's config. The entry kind (internal/kinds/gateway)
// applies each decoded entry to the Keeper as a whole (Apply), so a
// reload reaches open sessions, and a config that cannot be applied
// leaves the running one in place.
package gatewayauth
