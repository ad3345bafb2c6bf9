package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// headlessFetcher authorizes without a person: it GETs the authorization
// URL without following the redirect, and takes the code, state and iss
// from its Location. An authorization server that wants a person answers
// otherwise, and the error says to log in.
func headlessFetcher(client *http.Client) auth.AuthorizationCodeFetcher {
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
		if err != nil {
			return nil, fmt.Errorf("authorization URL: %w", err)
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, fmt.Errorf("headless authorization: %w", err)
		}
		drain(resp)
		loc := resp.Header.Get("Location")
		if resp.StatusCode/100 != 3 || loc == "" {
			return nil, fmt.Errorf("headless authorization: the authorization server answered %s instead of redirecting with a code; it needs a person: use mcpbridge login", resp.Status)
		}
		u, err := url.Parse(loc)
		if err != nil {
			return nil, fmt.Errorf("headless authorization: the redirect does not parse: %w", err)
		}
		res, err := codeFrom(u.Query())
		if err == nil && res.State != sentState(args.URL) {
			return nil, errors.New("headless authorization: the authorization server redirected with a state that is not the one this authorization sent: nothing was authorized (its code is not used); the server must return the state unchanged (RFC 6749 §4.1.2), which its operator must fix")
		}
		return res, err
	}
}

// sentState is the state parameter of an authorization URL, "" when it
// has none (or does not parse).
func sentState(authURL string) string {
	u, err := url.Parse(authURL)
	if err != nil {
		return ""
	}
	return u.Query().Get("state")
}

// codeFrom reads an authorization response's parameters (RFC 6749 §4.1.2).
func codeFrom(q url.Values) (*auth.AuthorizationResult, error) {
	if e := q.Get("error"); e != "" {
		msg := "the authorization server refused: " + e
		if d := q.Get("error_description"); d != "" {
			msg += " (" + d + ")"
		}
		return nil, errors.New(msg)
	}
	if q.Get("code") == "" {
		return nil, errors.New("the authorization response carries no code")
	}
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}
