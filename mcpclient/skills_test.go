package mcpclient

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/internal/skillpeer"
	"github.com/mcpbridge/mcpbridge/tool"
)

// skillsHarness starts a client of the skills fixture (a real SDK server
// with skills/list beneath it) and returns the URIs it is asked to read.
func skillsHarness(t *testing.T, tamper string) (*harness, func() []string) {
	var mu sync.Mutex
	var reads []string
	fx := skillpeer.NewSkills(skillpeer.SkillsOptions{Tamper: tamper, OnRead: func(uri string) {
		mu.Lock()
		reads = append(reads, uri)
		mu.Unlock()
	}})
	h := mustStart(t, stdioConfig("sk"), Options{NewTransport: fx.NewTransport(t.Cleanup)})
	return h, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(reads)
	}
}

// Listing skills reads none of their files: not on connection, not on
// listing; the registry has each skill under its public name with what
// the listing says.
func TestSkillsListedWithoutPrefetch(t *testing.T) {
	h, reads := skillsHarness(t, "")
	var got []string
	for _, s := range h.reg.Skills() {
		got = append(got, s.Name+" "+s.Origin.Name+" "+s.URI+" "+s.Description)
	}
	want := []string{
		"mcp__sk__code-review code-review skill://code-review/SKILL.md Review a change for bugs",
		"mcp__sk__pdf-processing pdf-processing skill://pdf-processing/SKILL.md Extract, fill, and assemble PDF documents",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("skills (-want +got):\n%s", diff)
	}
	if r := reads(); len(r) != 0 {
		t.Errorf("files read before any skill was used: %v", r)
	}
}

// Using a skill reads its SKILL.md, and only it, verified; a supporting
// file is read when asked for; a file the listing lacks is refused before
// anything is read.
func TestSkillReadVerified(t *testing.T) {
	h, reads := skillsHarness(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body, err := h.reg.ReadSkill(ctx, "mcp__sk__pdf-processing", "")
	if err != nil || string(body) != skillpeer.SkillFiles["skill://pdf-processing/SKILL.md"] {
		t.Fatalf("SKILL.md: %q, %v", body, err)
	}
	if diff := cmp.Diff([]string{"skill://pdf-processing/SKILL.md"}, reads()); diff != "" {
		t.Errorf("reads (-want +got):\n%s", diff)
	}
	forms := "skill://pdf-processing/references/FORMS.md"
	if body, err := h.reg.ReadSkill(ctx, "mcp__sk__pdf-processing", forms); err != nil || string(body) != skillpeer.SkillFiles[forms] {
		t.Errorf("FORMS.md: %q, %v", body, err)
	}
	if body, err := h.reg.ReadSkill(ctx, "mcp__sk__code-review", ""); err != nil || !strings.Contains(string(body), "Read the diff twice.") {
		t.Errorf("code-review (nested frontmatter): %q, %v", body, err)
	}
	_, err = h.reg.ReadSkill(ctx, "mcp__sk__pdf-processing", "skill://pdf-processing/../../etc/passwd")
	if err == nil || !strings.Contains(err.Error(), "has no file") {
		t.Errorf("unlisted file: %v", err)
	}
	if _, err := h.reg.ReadSkill(ctx, "mcp__sk__nope", ""); !errors.Is(err, tool.ErrUnknownSkill) {
		t.Errorf("unknown skill: %v", err)
	}
	if n := len(reads()); n != 3 {
		t.Errorf("%d reads, want 3 (the refused file never reaches the server): %v", n, reads())
	}
}

// A SKILL.md that differs from its listing is refused, whatever differs:
// its digest, its size, or a frontmatter field (with digest and size that
// match). Nothing of it reaches the caller, and the error says which
// check failed.
func TestSkillVerificationFailsClosed(t *testing.T) {
	for _, tc := range []struct{ tamper, want string }{
		{"digest", "has digest sha256:"},
		{"size", "bytes, the listing says"},
		{"frontmatter", `frontmatter field "description" is "Exfiltrate credentials" in the file`},
	} {
		t.Run(tc.tamper, func(t *testing.T) {
			h, reads := skillsHarness(t, tc.tamper)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			body, err := h.reg.ReadSkill(ctx, "mcp__sk__pdf-processing", "")
			if !errors.Is(err, errSkillUnverified) || !strings.Contains(err.Error(), tc.want) || body != nil {
				t.Fatalf("tampered SKILL.md: %q, %v; want an error with %q", body, err, tc.want)
			}
			if diff := cmp.Diff([]string{"skill://pdf-processing/SKILL.md"}, reads()); diff != "" {
				t.Errorf("reads (-want +got):\n%s", diff)
			}
		})
	}
}

// An entry the bridge cannot verify against is not listed: its name
// differs from its URI's, a digest is malformed, a file lies outside the
// skill, or SKILL.md has no entry of its own.
func TestSkillEntryRefused(t *testing.T) {
	s := &Server{cfg: Config{ServerName: "sk"}}
	good := `"digest":"` + skillpeer.Digest("x") + `","size":1`
	for _, tc := range []struct{ name, entry, want string }{
		{"name", `{"uri":"skill://a/SKILL.md","frontmatter":{"name":"b","description":"d"},"resources":"dynamic"}`, `last path segment "a" is not the frontmatter name "b"`},
		{"digest", `{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a"},"resources":[{"uri":"skill://a/SKILL.md","digest":"md5:1","size":1}]}`, "is not sha256:"},
		{"outside", `{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a"},"resources":[{"uri":"skill://a/SKILL.md",` + good + `},{"uri":"skill://b/x",` + good + `}]}`, "outside the skill's directory"},
		{"manifest", `{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a"},"resources":[{"uri":"skill://a/x",` + good + `}]}`, "no entry for the skill's own SKILL.md"},
		{"resources", `{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a"}}`, `neither an array`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.skillEntry([]byte(tc.entry)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// A dynamic skill lists no files: any file of its directory may be read
// (there is no digest to check), nothing outside it, and its SKILL.md's
// frontmatter is still compared with the listing.
func TestSkillDynamic(t *testing.T) {
	s := &Server{cfg: Config{ServerName: "sk"}}
	sk, err := s.skillEntry([]byte(`{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":"dynamic"}`))
	if err != nil || !sk.Dynamic {
		t.Fatalf("entry: %+v, %v", sk, err)
	}
	for uri, want := range map[string]bool{"skill://a/SKILL.md": true, "skill://a/x/y.md": true, "skill://b/SKILL.md": false, "skill://ab/SKILL.md": false} {
		if _, ok := skillFile(sk, uri); ok != want {
			t.Errorf("skillFile(%s) = %v, want %v", uri, ok, want)
		}
	}
	manifest, _ := skillFile(sk, sk.URI)
	if err := verifySkillFile(sk, manifest, []byte("---\nname: a\ndescription: d\n---\nbody\n")); err != nil {
		t.Errorf("matching SKILL.md: %v", err)
	}
	if err := verifySkillFile(sk, manifest, []byte("---\nname: a\ndescription: other\n---\nbody\n")); !errors.Is(err, errSkillUnverified) {
		t.Errorf("SKILL.md with another description: %v", err)
	}
	if err := verifySkillFile(sk, manifest, []byte("no frontmatter\n")); !errors.Is(err, errSkillUnverified) || !strings.Contains(err.Error(), "no leading --- delimited YAML frontmatter") {
		t.Errorf("SKILL.md without frontmatter: %v", err)
	}
}
