package mcpclient

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/internal/naming"
	"github.com/mcpbridge/mcpbridge/tool"
)

// Skills over MCP (the skills extension, SEP-2640 draft): a server that
// declares io.modelcontextprotocol/skills lists its skills with
// skills/list, each entry the frontmatter of its SKILL.md and the digest
// and size of every file; the files themselves are resources. The bridge
// lists at sync and reads no file then: a file is read only when a
// consumer uses the skill (tool.Registry.ReadSkill), and what is read is
// checked against the listing before anyone sees it — its size, its
// SHA-256 digest and, for SKILL.md, its frontmatter field by field. Any
// mismatch fails closed: the content is dropped and the error says which
// check failed.

// SkillsExtension is the extension's identifier in capabilities.extensions.
const SkillsExtension = "io.modelcontextprotocol/skills"

// errSkillUnverified is wrapped by every verification failure of a skill
// file, so callers can tell tampering from an unreachable server.
var errSkillUnverified = errors.New("skill file failed verification")

// offersSkills reports whether the server of gen declared the extension.
func offersSkills(gen *generation) bool {
	caps := capabilities(gen)
	if caps == nil {
		return false
	}
	_, ok := caps.Extensions[SkillsExtension]
	return ok
}

// wireSkill is one skills/list entry as the bridge reads it. Resources is
// an array of files or the string "dynamic".
type wireSkill struct {
	URI         string          `json:"uri"`
	Frontmatter json.RawMessage `json:"frontmatter"`
	Resources   json.RawMessage `json:"resources"`
}

// fetchSkills lists the server's skills (every page) as registry entries;
// it reads no skill file.
func (s *Server) fetchSkills(ctx context.Context, gen *generation) ([]tool.Skill, error) {
	send := &taskSender{s: s, gen: gen}
	var out []tool.Skill
	err := paginate(s, "skills/list", "skills", func(cursor string) ([]json.RawMessage, string, int64, error) {
		params := map[string]json.RawMessage{}
		if cursor != "" {
			params["cursor"], _ = json.Marshal(cursor)
		}
		ctx, cancel := context.WithTimeoutCause(ctx, s.cfg.ToolCallTimeout, errCallTimeout)
		defer cancel()
		raw, err := send.send(ctx, "skills/list", params, true)
		if err != nil {
			return nil, "", 0, fmt.Errorf("server %q: skills/list: %w", s.cfg.ServerName, err)
		}
		var page struct {
			Skills     []json.RawMessage `json:"skills"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, "", 0, fmt.Errorf("server %q: skills/list: invalid result: %w", s.cfg.ServerName, err)
		}
		return page.Skills, page.NextCursor, int64(len(raw)), nil
	}, func(items []json.RawMessage) error {
		for _, raw := range items {
			sk, err := s.skillEntry(raw)
			if err != nil {
				s.ignored("skill", "skill", err.Error(), raw)
				continue
			}
			out = append(out, sk)
		}
		return nil
	})
	return s.nameSkills(out), err
}

// nameSkills gives each skill its public name: mcp__server__name, or,
// for a name more than one of the server's skills share (a listing may
// repeat a name; a gateway's does for its backends), the skill's path
// with "_" for "/" in place of the name. A URI listed twice keeps its
// first entry.
func (s *Server) nameSkills(skills []tool.Skill) []tool.Skill {
	count := map[string]int{}
	for _, sk := range skills {
		count[sk.Origin.Name]++
	}
	out := skills[:0]
	seen := map[string]bool{}
	for _, sk := range skills {
		name := sk.Origin.Name
		if count[name] > 1 {
			name = strings.ReplaceAll(strings.TrimPrefix(skillDir(sk.URI), skillSchemeOf(sk.URI)), "/", "_")
		}
		sk.Name = naming.Public(s.cfg.ServerName, name)
		if seen[sk.Name] {
			s.warnDef(kindResources, "skill ignored: its public name is taken by another of the server's skills", "skill", sk.Origin.Name, "uri", sk.URI, "public", sk.Name)
			continue
		}
		seen[sk.Name] = true
		sk.Read = s.skillReader(sk)
		out = append(out, sk)
	}
	return out
}

// skillSchemeOf is the "scheme://" that starts uri, or "".
func skillSchemeOf(uri string) string {
	if i := strings.Index(uri, "://"); i >= 0 {
		return uri[:i+3]
	}
	return ""
}

// skillEntry turns one listed entry into a registry skill (without its
// public name and reader: nameSkills), or says why the entry is unusable.
func (s *Server) skillEntry(raw json.RawMessage) (tool.Skill, error) {
	var w wireSkill
	if err := json.Unmarshal(raw, &w); err != nil {
		return tool.Skill{}, fmt.Errorf("not an object: %v", err)
	}
	var fm struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	if w.URI == "" || json.Unmarshal(w.Frontmatter, &fm) != nil || fm.Name == "" {
		return tool.Skill{}, errors.New("no uri, or no frontmatter object with a name")
	}
	if got := skillNameOf(w.URI); got != fm.Name {
		return tool.Skill{}, fmt.Errorf("the uri's last path segment %q is not the frontmatter name %q", got, fm.Name)
	}
	files, dynamic, err := skillFiles(w)
	if err != nil {
		return tool.Skill{}, err
	}
	return tool.Skill{
		Origin: tool.Origin{Server: s.cfg.ServerName, Name: fm.Name},
		URI:    w.URI, Description: fm.Description, Frontmatter: w.Frontmatter, Files: files, Dynamic: dynamic, Wire: raw,
	}, nil
}

// skillFiles decodes an entry's resources: the files with their digests
// and sizes, SKILL.md among them, or "dynamic".
func skillFiles(w wireSkill) ([]tool.SkillFile, bool, error) {
	if string(bytes.TrimSpace(w.Resources)) == `"dynamic"` {
		return nil, true, nil
	}
	var files []tool.SkillFile
	if err := json.Unmarshal(w.Resources, &files); err != nil || files == nil {
		return nil, false, errors.New(`resources is neither an array of {uri, digest, size} nor "dynamic"`)
	}
	dir := skillDir(w.URI)
	hasManifest := false
	for _, f := range files {
		if !digestPattern.MatchString(f.Digest) || f.Size < 0 {
			return nil, false, fmt.Errorf("file %q: digest %q is not sha256:<64 lowercase hex> or size %d is negative", f.URI, f.Digest, f.Size)
		}
		if f.URI != w.URI && !strings.HasPrefix(f.URI, dir+"/") {
			return nil, false, fmt.Errorf("file %q is outside the skill's directory %q", f.URI, dir)
		}
		hasManifest = hasManifest || f.URI == w.URI
	}
	if !hasManifest {
		return nil, false, fmt.Errorf("resources lists no entry for the skill's own SKILL.md %q", w.URI)
	}
	return files, false, nil
}

// digestPattern is the form of a file digest.
var digestPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// skillDir is the URI of the directory of the SKILL.md at uri.
func skillDir(uri string) string {
	return strings.TrimSuffix(uri, "/SKILL.md")
}

// skillNameOf is the skill name a SKILL.md URI carries: its directory's
// last segment; "" when uri does not name a SKILL.md.
func skillNameOf(uri string) string {
	dir, ok := strings.CutSuffix(uri, "/SKILL.md")
	if !ok {
		return ""
	}
	return dir[strings.LastIndex(dir, "/")+1:]
}

// skillReader returns the verified reader of sk's files.
func (s *Server) skillReader(sk tool.Skill) tool.SkillReadFunc {
	return func(ctx context.Context, uri string) ([]byte, error) {
		file, listed := skillFile(sk, uri)
		if !listed {
			return nil, fmt.Errorf("skill %q has no file %q in its listing; its files are: %s", sk.Name, uri, skillFileList(sk))
		}
		res, err := s.readResource(ctx, uri)
		if err != nil {
			return nil, err
		}
		content, err := resourceBytes(res.Wire, uri)
		if err != nil {
			return nil, fmt.Errorf("skill %q: %w", sk.Name, err)
		}
		if err := verifySkillFile(sk, file, content); err != nil {
			s.log.Warn("skill file rejected", "skill", sk.Name, "uri", uri, "err", err)
			return nil, err
		}
		return content, nil
	}
}

// skillFile finds uri among sk's listed files. A dynamic skill lists
// none: any file of its directory is allowed, unchecked but for SKILL.md's
// frontmatter (Digest empty).
func skillFile(sk tool.Skill, uri string) (tool.SkillFile, bool) {
	if sk.Dynamic {
		return tool.SkillFile{URI: uri}, uri == sk.URI || strings.HasPrefix(uri, skillDir(sk.URI)+"/")
	}
	for _, f := range sk.Files {
		if f.URI == uri {
			return f, true
		}
	}
	return tool.SkillFile{}, false
}

// skillFileList names sk's listed files, for an error.
func skillFileList(sk tool.Skill) string {
	if sk.Dynamic {
		return "any under " + skillDir(sk.URI) + "/ (dynamic)"
	}
	uris := make([]string, len(sk.Files))
	for i, f := range sk.Files {
		uris[i] = f.URI
	}
	return strings.Join(uris, ", ")
}

// resourceBytes is the raw content of uri in a resources/read result: its
// text, or its base64 blob decoded.
func resourceBytes(wire json.RawMessage, uri string) ([]byte, error) {
	var res struct {
		Contents []struct {
			URI  string  `json:"uri"`
			Text *string `json:"text"`
			Blob *string `json:"blob"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(wire, &res); err != nil {
		return nil, fmt.Errorf("resources/read of %q: invalid result: %w", uri, err)
	}
	for _, c := range res.Contents {
		switch {
		case c.Text != nil:
			return []byte(*c.Text), nil
		case c.Blob != nil:
			b, err := base64.StdEncoding.DecodeString(*c.Blob)
			if err != nil {
				return nil, fmt.Errorf("resources/read of %q: blob is not base64: %w", uri, err)
			}
			return b, nil
		}
	}
	return nil, fmt.Errorf("resources/read of %q returned no text or blob content", uri)
}

// verifySkillFile checks content against its listing entry: size first
// (cheap), then digest, then for SKILL.md the frontmatter. A dynamic
// skill's files carry no digest to check.
func verifySkillFile(sk tool.Skill, file tool.SkillFile, content []byte) error {
	if file.Digest != "" {
		if int64(len(content)) != file.Size {
			return fmt.Errorf("%w: skill %q: %s is %d bytes, the listing says %d", errSkillUnverified, sk.Name, file.URI, len(content), file.Size)
		}
		sum := sha256.Sum256(content)
		if got := "sha256:" + hex.EncodeToString(sum[:]); got != file.Digest {
			return fmt.Errorf("%w: skill %q: %s has digest %s, the listing says %s", errSkillUnverified, sk.Name, file.URI, got, file.Digest)
		}
	}
	if file.URI != sk.URI {
		return nil
	}
	return verifyFrontmatter(sk, content)
}

// verifyFrontmatter compares the YAML frontmatter of a SKILL.md with the
// listed one, field by field, as JSON values.
func verifyFrontmatter(sk tool.Skill, content []byte) error {
	got, err := parseFrontmatter(content)
	if err != nil {
		return fmt.Errorf("%w: skill %q: %s: %v", errSkillUnverified, sk.Name, sk.URI, err)
	}
	var want map[string]any
	if err := json.Unmarshal(sk.Frontmatter, &want); err != nil {
		return fmt.Errorf("%w: skill %q: the listed frontmatter is not an object", errSkillUnverified, sk.Name)
	}
	for _, k := range unionKeys(got, want) {
		if !reflect.DeepEqual(got[k], want[k]) {
			return fmt.Errorf("%w: skill %q: %s: frontmatter field %q is %s in the file but %s in the listing",
				errSkillUnverified, sk.Name, sk.URI, k, jsonText(got[k]), jsonText(want[k]))
		}
	}
	return nil
}

// frontmatterBlock matches a leading --- delimited YAML block.
var frontmatterBlock = regexp.MustCompile(`^(?:\x{FEFF})?---\r?\n((?s:.*?))\r?\n---[ \t]*(?:\r?\n|$)`)

// parseFrontmatter decodes the frontmatter of a SKILL.md into JSON values
// (via a JSON round trip, so numbers and maps compare as the listing's).
func parseFrontmatter(content []byte) (map[string]any, error) {
	m := frontmatterBlock.FindSubmatch(content)
	if m == nil {
		return nil, errors.New("no leading --- delimited YAML frontmatter")
	}
	var y map[string]any
	if err := yaml.Unmarshal(m[1], &y); err != nil {
		return nil, fmt.Errorf("frontmatter is not YAML: %w", err)
	}
	b, err := json.Marshal(y)
	if err != nil {
		return nil, fmt.Errorf("frontmatter has no JSON form: %w", err)
	}
	var out map[string]any
	return out, json.Unmarshal(b, &out)
}

// unionKeys returns the keys of a and b.
func unionKeys(a, b map[string]any) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	return keys
}

// jsonText renders v for an error message.
func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
