package mcpclient_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/mcpclient"
)

func TestDecodeOAuth(t *testing.T) {
	const http = "serverName: srv\ntransport: streamable-http\nurl: https://mcp.example.test/mcp\n" // lines 1-3
	got, errs := decodeYAML(t, http+`oauth:
  clientId: cli
  clientSecret: ${TOKEN}
  clientMetadataUrl: https://bridge.example.test/client.json
  scopes: [read, write]
  callbackPort: 8976
`)
	want := &mcpclient.OAuthConfig{
		ClientID: "cli", ClientSecret: secret, ClientMetadataURL: "https://bridge.example.test/client.json",
		Scopes: []string{"read", "write"}, CallbackPort: 8976,
	}
	if diff := cmp.Diff(want, got.OAuth); errs != "" || diff != "" {
		t.Fatalf("oauth block: %s (-want +got):\n%s", errs, diff)
	}
	got, errs = decodeYAML(t, http+`oauth:
  grant: cross_app_access
  clientId: cli
  idp: {issuer: "https://idp.example.test", clientId: idp-cli, clientSecret: s, idToken: "${TOKEN}", tokenEndpoint: "https://idp.example.test/token"}
`)
	wantIdP := &mcpclient.OAuthIdP{Issuer: "https://idp.example.test", TokenEndpoint: "https://idp.example.test/token", ClientID: "idp-cli", ClientSecret: "s", IDToken: secret}
	if diff := cmp.Diff(wantIdP, got.OAuth.IdP); errs != "" || diff != "" {
		t.Fatalf("idp block: %s (-want +got):\n%s", errs, diff)
	}
	if c := got.WithDefaults(); c.OAuth == got.OAuth || c.OAuth.IdP == got.OAuth.IdP || !cmp.Equal(c.OAuth, got.OAuth) {
		t.Error("WithDefaults must copy the oauth block")
	}

	got, errs = decodeYAML(t, http+`oauth:
  grant: jwt_bearer
  assertionFile: ${TOKEN}
  dpop: true
`)
	if want := (&mcpclient.OAuthConfig{Grant: "jwt_bearer", AssertionFile: secret, DPoP: true}); errs != "" || !cmp.Equal(want, got.OAuth) {
		t.Fatalf("workload block: %s (-want +got):\n%s", errs, cmp.Diff(want, got.OAuth))
	}

	for _, tc := range []struct{ name, src, want string }{
		{"workload without its JWT", http + "oauth: {grant: jwt_bearer}",
			`4:16: config.oauth.grant: jwt_bearer needs exactly one of assertionFile and assertionEnv (where the workload's JWT is)`},
		{"assertion outside jwt_bearer", http + "oauth: {assertionEnv: MCP_TOKEN}", `4:23: config.oauth.assertionEnv: is only valid with grant: jwt_bearer`},
		{"assertionEnv a reference", http + "oauth: {grant: jwt_bearer, assertionEnv: $MCP_TOKEN}",
			`4:42: config.oauth.assertionEnv: must be the name of an environment variable (letters, digits and _, not starting with a digit)`},
		{"dpop", http + "oauth: {dpop: sometimes}", `4:15: config.oauth.dpop: must be true or false, got a string`},
		{"unknown key", http + "oauth:\n  clientID: x", `5:3: config.oauth.clientID: unknown key "clientID" (did you mean "clientId"?)`},
		{"not a mapping", http + "oauth: yes", `4:8: config.oauth: must be a mapping of keys to values, got a string`},
		{"secret in a bad place", http + "oauth:\n  clientMetadataUrl: http://${TOKEN}/x",
			`5:22: config.oauth.clientMetadataUrl: must be an https:// URL with a path (a Client ID Metadata Document)`},
		{"grant", http + "oauth: {grant: password}", `4:16: config.oauth.grant: must be one of authorization_code, client_credentials, cross_app_access, jwt_bearer`},
		{"port", http + "oauth: {callbackPort: 99999}", `4:23: config.oauth.callbackPort: must be between 0 and 65535, got 99999`},
		{"idp key", http + "oauth:\n  grant: cross_app_access\n  clientId: c\n  idp: {issuer: 'https://i.test', clientId: c, idToken: t, audience: x}",
			`7:60: config.oauth.idp.audience: unknown key "audience"`},
		{"idp field", http + "oauth:\n  grant: cross_app_access\n  clientId: c\n  idp: {issuer: 'https://i.test', clientId: c}",
			`7:8: config.oauth.idp.idToken: is required with grant: cross_app_access`},
		{"stdio", "serverName: srv\ntransport: stdio\ncommand: echo\noauth: {clientId: c}",
			`4:8: config.oauth: oauth is only valid with transport: streamable-http`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := decodeYAML(t, tc.src)
			if diff := cmp.Diff(tc.want, errs); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateOAuth(t *testing.T) {
	c := mcpclient.Config{ServerName: "srv", Transport: mcpclient.TransportStreamableHTTP, URL: "https://x.test/mcp",
		OAuth: &mcpclient.OAuthConfig{Grant: "client_credentials", ClientID: "c"}}
	want := "oauth.grant: client_credentials needs exactly one of clientSecret and privateKeyFile"
	if err := c.Validate(); err == nil || err.Error() != want {
		t.Errorf("Validate: %v, want %q", err, want)
	}
}
