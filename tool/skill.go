package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Skill is one Agent Skill a server offers through the skills extension
// (io.modelcontextprotocol/skills): what its listing says, and a function
// that reads its files. A listing carries no file content; a consumer
// reads a file only when it uses the skill (Registry.ReadSkill), and the
// source verifies what it reads against the listing before handing it on.
type Skill struct {
	// Name is the public name (like a tool's: mcp__server__name),
	// unique among the registry's skills.
	Name string
	// Origin is the server and the skill's own name (its frontmatter name).
	Origin Origin
	// URI names the skill's SKILL.md at its server.
	URI string
	// Description is the frontmatter's description: when to use the skill.
	Description string
	// Frontmatter is the SKILL.md frontmatter as listed, a JSON object.
	Frontmatter json.RawMessage
	// Files are the skill's files as listed (SKILL.md among them), each
	// with the digest and size its content must have; nil when Dynamic.
	Files []SkillFile
	// Dynamic is true when the server publishes no file list
	// ("resources": "dynamic"): then only the frontmatter of SKILL.md
	// can be checked.
	Dynamic bool
	// Read reads one file of the skill by URI (URI itself for SKILL.md)
	// and returns its content once verified; required.
	Read SkillReadFunc
	// Wire is the skill entry as the server sent it; optional, valid JSON.
	Wire json.RawMessage
}

// SkillFile is one file of a skill's listing.
type SkillFile struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// SkillReadFunc reads one file of a skill, verified.
type SkillReadFunc func(ctx context.Context, uri string) ([]byte, error)

// ErrUnknownSkill is wrapped by the error of ReadSkill for a skill name no
// server offers; its text reads as the start of the message.
var ErrUnknownSkill = fmt.Errorf("unknown skill")

// checkSkills reports the first skill without a name or Read function,
// with invalid JSON on the wire, or named twice.
func checkSkills(server string, skills []Skill) error {
	seen := make(map[string]bool, len(skills))
	for i, s := range skills {
		switch {
		case s.Name == "" || s.URI == "":
			return fmt.Errorf("offer of server %q: skill at index %d has no name or URI", server, i)
		case s.Read == nil:
			return fmt.Errorf("skill %q: Read is nil", s.Name)
		case seen[s.Name]:
			return &ConflictError{Name: s.Name, Kind: "skill"}
		}
		if err := checkJSON(s.Wire); err != nil {
			return fmt.Errorf("skill %q: Wire is not valid JSON: %w", s.Name, err)
		}
		if err := checkJSON(s.Frontmatter); err != nil {
			return fmt.Errorf("skill %q: Frontmatter is not valid JSON: %w", s.Name, err)
		}
		seen[s.Name] = true
	}
	return nil
}

// Skills returns every server's skills, sorted by public name. The slice
// is fresh; listing reads no file of any skill.
func (r *Registry) Skills() []Skill {
	var out []Skill
	for _, o := range r.offers() {
		out = append(out, o.Skills...)
	}
	slices.SortFunc(out, func(a, b Skill) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Skill returns the skill of public name name.
func (r *Registry) Skill(name string) (Skill, error) {
	r.mu.RLock()
	e, ok := r.skills[name]
	r.mu.RUnlock()
	if !ok {
		return Skill{}, fmt.Errorf("%w %q", ErrUnknownSkill, name)
	}
	return e.skill, nil
}

// skillEntry is one registered skill and the handle that owns it.
type skillEntry struct {
	skill Skill
	owner *Handle
}

// ReadSkill reads the file uri of the skill of public name name (empty uri:
// its SKILL.md), verified by its source. ctx ends the read.
func (r *Registry) ReadSkill(ctx context.Context, name, uri string) ([]byte, error) {
	s, err := r.Skill(name)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if uri == "" {
		uri = s.URI
	}
	return s.Read(ctx, uri)
}
