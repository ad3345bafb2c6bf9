package report

import (
	"encoding/json"
	"strings"

	"github.com/mcpbridge/mcpbridge/tool"
)

// Resources is resources --json: each item the object the server sent,
// with "server" first.
type Resources struct {
	Resources []json.RawMessage `json:"resources"`
	Templates []json.RawMessage `json:"resourceTemplates"`
}

// NewResources is resources --json of res and tpl.
func NewResources(res []tool.Resource, tpl []tool.ResourceTemplate) Resources {
	out := Resources{Resources: []json.RawMessage{}, Templates: []json.RawMessage{}}
	for _, r := range res {
		out.Resources = append(out.Resources, withServer(r.Server, r.Wire, r))
	}
	for _, t := range tpl {
		out.Templates = append(out.Templates, withServer(t.Server, t.Wire, t))
	}
	return out
}

// withServer returns the object wire with a "server" member in front, or
// fallback marshalled when wire is not an object.
func withServer(server string, wire json.RawMessage, fallback any) json.RawMessage {
	name, _ := json.Marshal(server)
	body := strings.TrimSpace(string(wire))
	if !strings.HasPrefix(body, "{") {
		b, _ := json.Marshal(fallback)
		body = string(b)
	}
	sep := ","
	if strings.TrimSpace(body[1:]) == "}" {
		sep = ""
	}
	return json.RawMessage(`{"server":` + string(name) + sep + body[1:])
}

// Prompt is one prompt as prompts --json prints it.
type Prompt struct {
	Name        string                `json:"name"`
	Server      string                `json:"server"`
	Title       string                `json:"title,omitempty"`
	Description string                `json:"description,omitempty"`
	Arguments   []tool.PromptArgument `json:"arguments,omitempty"`
}

// NewPrompts is prompts --json of ps.
func NewPrompts(ps []tool.Prompt) []Prompt {
	out := make([]Prompt, 0, len(ps))
	for _, p := range ps {
		out = append(out, Prompt{Name: p.Name, Server: p.Origin.Server, Title: p.Title, Description: p.Description, Arguments: p.Arguments})
	}
	return out
}

// Skill is one skill as skills --json prints it.
type Skill struct {
	Name        string           `json:"name"`
	Server      string           `json:"server"`
	Skill       string           `json:"skill"`
	URI         string           `json:"uri"`
	Description string           `json:"description,omitempty"`
	Frontmatter json.RawMessage  `json:"frontmatter,omitempty"`
	Files       []tool.SkillFile `json:"files,omitempty"`
	Dynamic     bool             `json:"dynamic,omitempty"`
}

// NewSkills is skills --json of sks.
func NewSkills(sks []tool.Skill) []Skill {
	out := make([]Skill, 0, len(sks))
	for _, s := range sks {
		out = append(out, Skill{Name: s.Name, Server: s.Origin.Server, Skill: s.Origin.Name, URI: s.URI,
			Description: s.Description, Frontmatter: s.Frontmatter, Files: s.Files, Dynamic: s.Dynamic})
	}
	return out
}
