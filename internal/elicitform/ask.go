package elicitform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpbridge/mcpbridge/internal/termio"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
)

// A person at a terminal answers a server's elicitation field by field:
// the server's text on out (escaped: it is the server's, not ours), the
// answers read from in. At any prompt ":decline" or ":cancel" ends the
// form so; the end of input cancels it.

// Decline and Cancel are the answers that end an elicitation without
// content (the person's, or --elicit's).
const (
	Decline = `{"action":"decline"}`
	Cancel  = `{"action":"cancel"}`
)

// The same, as answers.
func answerDecline() json.RawMessage { return json.RawMessage(Decline) }
func answerCancel() json.RawMessage  { return json.RawMessage(Cancel) }

// errEnded is returned by a prompt when the person declined or cancelled;
// answer carries which.
type errEnded struct{ answer json.RawMessage }

func (e *errEnded) Error() string { return "the person ended the form" }

// Ask puts the elicitation params of server (a form, or a URL to open)
// to the person who types the lines of in and reads out, and returns the
// answer: accept with the form's content, decline or cancel. What was
// typed before the form showed is dropped, as a line typed for another
// question. One elicitation at a time per in.
func Ask(ctx context.Context, in *termio.LineReader, out io.Writer, server string, params json.RawMessage) (json.RawMessage, error) {
	var req struct {
		Mode    string          `json:"mode"`
		Message string          `json:"message"`
		URL     string          `json:"url"`
		Schema  json.RawMessage `json:"requestedSchema"`
	}
	if err := json.Unmarshal(params, &req); err != nil {
		return nil, fmt.Errorf("invalid elicitation request: %w", err)
	}
	if err := in.DropTypedAhead(ctx); err != nil { // typed before the form showed: not for it
		return nil, err
	}
	p := &prompter{ctx: ctx, in: in, out: out}
	var answer json.RawMessage
	var err error
	if req.Mode == "url" {
		answer, err = p.url(server, req.Message, req.URL)
	} else {
		answer, err = p.form(server, req.Message, req.Schema)
	}
	var ended *errEnded
	if errors.As(err, &ended) {
		return ended.answer, nil
	}
	return answer, err
}

// prompter asks one elicitation.
type prompter struct {
	ctx context.Context
	in  *termio.LineReader
	out io.Writer
}

// ask prints prompt and reads a line; ":decline" and ":cancel" end the
// form, as does the end of input (cancel).
func (p *prompter) ask(prompt string) (string, error) {
	fmt.Fprint(p.out, prompt)
	line, err := p.in.Next(p.ctx)
	switch {
	case errors.Is(err, io.EOF):
		fmt.Fprintln(p.out)
		return "", &errEnded{answerCancel()}
	case err != nil:
		return "", err
	}
	switch strings.TrimSpace(line) {
	case ":decline":
		return "", &errEnded{answerDecline()}
	case ":cancel":
		return "", &errEnded{answerCancel()}
	}
	return line, nil
}

// url shows a URL elicitation and waits for the person: Enter accepts
// (they went there), n declines.
func (p *prompter) url(server, message, url string) (json.RawMessage, error) {
	fmt.Fprintf(p.out, "\nServer %q asks you to open a URL: %s\n  %s\n", termsafe.Line(server), termsafe.Text(message), termsafe.Line(url))
	for {
		line, err := p.ask("Press Enter once done there, or n to decline (:cancel cancels): ")
		if err != nil {
			return nil, err
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "", "y", "yes":
			return json.RawMessage(`{"action":"accept"}`), nil
		case "n", "no":
			return answerDecline(), nil
		}
	}
}

// form asks each field of schema, then whether to send the answers.
func (p *prompter) form(server, message string, schema json.RawMessage) (json.RawMessage, error) {
	f, err := Parse(schema)
	if err != nil {
		fmt.Fprintf(p.out, "\nServer %q asked for a form mcpbridge cannot show (declined): %s\n", termsafe.Line(server), termsafe.Line(err.Error()))
		return answerDecline(), nil
	}
	fmt.Fprintf(p.out, "\nServer %q asks: %s\n", termsafe.Line(server), termsafe.Text(message))
	fmt.Fprintln(p.out, "(Enter keeps the [default]; :decline or :cancel at any prompt.)")
	for {
		content, err := p.fields(f)
		if err != nil {
			return nil, err
		}
		if err := f.Validate(content); err != nil {
			fmt.Fprintf(p.out, "  not accepted: %s; once more:\n", termsafe.Line(err.Error()))
			continue
		}
		return p.confirm(content)
	}
}

// fields asks every field until each answer is valid.
func (p *prompter) fields(f *Form) (map[string]any, error) {
	content := map[string]any{}
	for _, field := range f.Fields {
		p.describe(field)
		for {
			line, err := p.ask("  " + termsafe.Line(field.Hint()) + ": ")
			if err != nil {
				return nil, err
			}
			v, ok, err := field.Read(line)
			if err != nil {
				fmt.Fprintf(p.out, "  not accepted: %s\n", termsafe.Line(err.Error()))
				continue
			}
			if ok {
				content[field.Name] = v
			}
			break
		}
	}
	return content, nil
}

// describe prints a field's title, description and choices.
func (p *prompter) describe(f *Field) {
	head := termsafe.Line(f.Title)
	if f.Required {
		head += " (required)"
	}
	if f.Description != "" {
		head += ": " + termsafe.Line(f.Description)
	}
	fmt.Fprintln(p.out, head)
	for i, c := range f.Options {
		fmt.Fprintf(p.out, "  %d) %s\n", i+1, termsafe.Line(c.Title))
	}
}

// confirm asks whether to send the answers: yes accepts, no declines.
func (p *prompter) confirm(content map[string]any) (json.RawMessage, error) {
	for {
		line, err := p.ask("Send these answers? [Y]es, [n]o (decline), [c]ancel: ")
		if err != nil {
			return nil, err
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "", "y", "yes":
			return json.Marshal(map[string]any{"action": "accept", "content": content})
		case "n", "no":
			return answerDecline(), nil
		case "c", "cancel":
			return answerCancel(), nil
		}
	}
}
