package tool

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/yosida95/uritemplate/v3"
)

// promptEntry is one registered prompt and the handle that owns it.
type promptEntry struct {
	prompt Prompt
	owner  *Handle
}

// checkOffer checks the non-tool part of o and returns it (Tools nil), or
// nil when o has none.
func checkOffer(o Offer) (*Offer, error) {
	if len(o.Resources) == 0 && len(o.Templates) == 0 && len(o.Prompts) == 0 && len(o.Skills) == 0 && o.Complete == nil {
		return nil, nil
	}
	if o.Server == "" {
		return nil, fmt.Errorf("offer: resources, templates, prompts, skills or completion need a Server")
	}
	if (len(o.Resources) > 0 || len(o.Templates) > 0) && o.Read == nil {
		return nil, fmt.Errorf("offer of server %q: resources without a Read function", o.Server)
	}
	rest := o
	rest.Tools = nil
	var err error
	if rest.Resources, err = ownItems(o.Server, "resource", "URI", o.Resources, func(r *Resource) (*string, string, json.RawMessage) {
		return &r.Server, r.URI, r.Wire
	}); err != nil {
		return nil, err
	}
	if rest.Templates, err = ownItems(o.Server, "resource template", "URI template", o.Templates, func(t *ResourceTemplate) (*string, string, json.RawMessage) {
		return &t.Server, t.URITemplate, t.Wire
	}); err != nil {
		return nil, err
	}
	if err := checkPrompts(o.Server, o.Prompts); err != nil {
		return nil, err
	}
	rest.Prompts = slices.Clone(o.Prompts) // the registry drops them by these names later
	if err := checkSkills(o.Server, o.Skills); err != nil {
		return nil, err
	}
	rest.Skills = slices.Clone(o.Skills)
	return &rest, nil
}

// ownItems returns a copy of items, each stamped with server (the server
// it names, when it names none) and checked: a key, that server, valid
// JSON on the wire, no key twice. fields gives an item's server, key and
// wire.
func ownItems[T any](server, what, keyName string, items []T, fields func(*T) (*string, string, json.RawMessage)) ([]T, error) {
	out := slices.Clone(items)
	seen := make(map[string]bool, len(out))
	for i := range out {
		owner, key, wire := fields(&out[i])
		*owner = cmp.Or(*owner, server)
		switch {
		case key == "" || *owner != server:
			return nil, fmt.Errorf("offer of server %q: %s at index %d has no %s or another server", server, what, i, keyName)
		case seen[key]:
			return nil, fmt.Errorf("offer of server %q: %s %q listed twice", server, keyName, key)
		}
		if err := checkJSON(wire); err != nil {
			return nil, fmt.Errorf("%s %q: Wire is not valid JSON: %w", what, key, err)
		}
		seen[key] = true
	}
	return out, nil
}

// checkPrompts reports the first prompt without a name or Get function,
// with invalid JSON on the wire, or named twice.
func checkPrompts(server string, prompts []Prompt) error {
	seen := make(map[string]bool, len(prompts))
	for i, p := range prompts {
		switch {
		case p.Name == "":
			return fmt.Errorf("offer of server %q: prompt at index %d has no name", server, i)
		case p.Get == nil:
			return fmt.Errorf("prompt %q: Get is nil", p.Name)
		case seen[p.Name]:
			return &ConflictError{Name: p.Name, Kind: "prompt"}
		}
		if err := checkJSON(p.Wire); err != nil {
			return fmt.Errorf("prompt %q: Wire is not valid JSON: %w", p.Name, err)
		}
		seen[p.Name] = true
	}
	return nil
}

// addOfferLocked registers h's offer, if any; true when it had something.
func (r *Registry) addOfferLocked(h *Handle) bool {
	o := h.offer
	if o == nil {
		return false
	}
	if r.servers == nil {
		r.servers = make(map[string]*Handle)
	}
	r.servers[o.Server] = h
	if len(o.Prompts) > 0 && r.prompts == nil {
		r.prompts = make(map[string]promptEntry, len(o.Prompts))
	}
	for _, p := range o.Prompts {
		r.prompts[p.Name] = promptEntry{prompt: p, owner: h}
	}
	if len(o.Skills) > 0 && r.skills == nil {
		r.skills = make(map[string]skillEntry, len(o.Skills))
	}
	for _, s := range o.Skills {
		r.skills[s.Name] = skillEntry{skill: s, owner: h}
	}
	return true
}

// dropOfferLocked removes h's offer; true when it had something.
func (r *Registry) dropOfferLocked(h *Handle) bool {
	o := h.offer
	if o == nil {
		return false
	}
	if r.servers[o.Server] == h {
		delete(r.servers, o.Server)
	}
	for _, p := range o.Prompts {
		delete(r.prompts, p.Name)
	}
	for _, s := range o.Skills {
		delete(r.skills, s.Name)
	}
	return true
}

// offers returns the registered offers (Tools nil) sorted by server.
func (r *Registry) offers() []*Offer {
	r.mu.RLock()
	out := make([]*Offer, 0, len(r.servers))
	for _, h := range r.servers {
		out = append(out, h.offer)
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b *Offer) int { return strings.Compare(a.Server, b.Server) })
	return out
}

// offerOf returns the offer of server.
func (r *Registry) offerOf(server string) (*Offer, error) {
	r.mu.RLock()
	h, err := r.serverHandleLocked(server)
	r.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	return h.offer, nil
}

// Resources returns every server's resources: servers by name, each
// server's in its own order. The slice is fresh.
func (r *Registry) Resources() []Resource {
	var out []Resource
	for _, o := range r.offers() {
		out = append(out, o.Resources...)
	}
	return out
}

// ResourceTemplates returns every server's resource templates, ordered as
// Resources.
func (r *Registry) ResourceTemplates() []ResourceTemplate {
	var out []ResourceTemplate
	for _, o := range r.offers() {
		out = append(out, o.Templates...)
	}
	return out
}

// Prompts returns every prompt, sorted by public name.
func (r *Registry) Prompts() []Prompt {
	r.mu.RLock()
	out := make([]Prompt, 0, len(r.prompts))
	for _, e := range r.prompts {
		out = append(out, e.prompt)
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b Prompt) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Servers returns the servers that publish resources, templates, prompts or
// completion, by name, with what each offers.
func (r *Registry) Servers() []ServerOffer {
	var out []ServerOffer
	for _, o := range r.offers() {
		out = append(out, ServerOffer{
			Server: o.Server, Resources: len(o.Resources) > 0 || len(o.Templates) > 0,
			Prompts: len(o.Prompts) > 0, Complete: o.Complete != nil,
			Subscribe: o.Subscribe != nil, HideResources: o.HideResources,
		})
	}
	return out
}

// ServerOffer says what one server publishes besides tools.
type ServerOffer struct {
	Server                                  string
	Resources, Prompts, Complete, Subscribe bool
	HideResources                           bool
}

// ResourceServers returns the servers that can read uri: those listing it,
// then those with a template matching it, each group by server name.
func (r *Registry) ResourceServers(uri string) []string {
	var listed, templated []string
	for _, o := range r.offers() {
		switch {
		case slices.ContainsFunc(o.Resources, func(res Resource) bool { return res.URI == uri }):
			listed = append(listed, o.Server)
		case slices.ContainsFunc(o.Templates, func(t ResourceTemplate) bool { return TemplateMatches(t.URITemplate, uri) }):
			templated = append(templated, o.Server)
		}
	}
	return append(listed, templated...)
}

// TemplateMatches reports whether uri is an expansion of the RFC 6570 URI
// template tmpl. A template that does not parse matches nothing.
func TemplateMatches(tmpl, uri string) bool {
	t, err := uritemplate.New(tmpl)
	if err != nil {
		return false
	}
	return t.Match(uri) != nil
}

// ReadResource reads uri from server; the server's errors come back as
// they are. ctx ends the read.
func (r *Registry) ReadResource(ctx context.Context, server, uri string) (ReadResult, error) {
	o, err := r.offerOf(server)
	if err != nil {
		return ReadResult{}, err
	}
	if o.Read == nil {
		return ReadResult{}, fmt.Errorf("server %q: resources are %w", server, ErrUnsupported)
	}
	if err := ctx.Err(); err != nil {
		return ReadResult{}, err
	}
	return o.Read(ctx, uri)
}

// GetPrompt renders the prompt named name (its public name) with args.
func (r *Registry) GetPrompt(ctx context.Context, name string, args map[string]string) (PromptResult, error) {
	r.mu.RLock()
	e, ok := r.prompts[name]
	r.mu.RUnlock()
	if !ok {
		return PromptResult{}, fmt.Errorf("%w %q", ErrUnknownPrompt, name)
	}
	if err := ctx.Err(); err != nil {
		return PromptResult{}, err
	}
	return e.prompt.Get(ctx, args)
}

// ErrUnknownPrompt is wrapped by the error of GetPrompt and Complete for a
// prompt name no server offers. Its text reads as the start of the
// message: `unknown prompt "<name>"`.
var ErrUnknownPrompt = fmt.Errorf("unknown prompt")

// Complete routes a completion request: a prompt reference to the prompt's
// server (with its raw name), a template reference to req.Server, or else
// to the first server by name listing that template.
func (r *Registry) Complete(ctx context.Context, req CompleteRequest) (Completion, error) {
	var o *Offer
	switch req.Ref.Type {
	case RefPrompt:
		r.mu.RLock()
		e, ok := r.prompts[req.Ref.Name]
		r.mu.RUnlock()
		if !ok {
			return Completion{}, fmt.Errorf("%w %q", ErrUnknownPrompt, req.Ref.Name)
		}
		o = e.owner.offer
		req.Ref.Name = e.prompt.Origin.Name
	case RefResource:
		for _, cand := range r.offers() {
			if (req.Server == "" || req.Server == cand.Server) &&
				slices.ContainsFunc(cand.Templates, func(t ResourceTemplate) bool { return t.URITemplate == req.Ref.URI }) {
				o = cand
				break
			}
		}
		if o == nil {
			return Completion{}, fmt.Errorf("%w lists the resource template %q", ErrNoServer, req.Ref.URI)
		}
	default:
		return Completion{}, fmt.Errorf("completion reference type %q is neither %q nor %q", req.Ref.Type, RefPrompt, RefResource)
	}
	if o.Complete == nil {
		return Completion{}, fmt.Errorf("server %q: completion is %w", o.Server, ErrUnsupported)
	}
	if err := ctx.Err(); err != nil {
		return Completion{}, err
	}
	req.Server = o.Server
	return o.Complete(ctx, req)
}

// PublishOffer is Publish for a whole Offer: the source's tools, resources,
// templates and prompts replaced together in one swap.
func (s *Source) PublishOffer(o Offer) error {
	return s.publish(o)
}
