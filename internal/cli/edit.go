package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/confpos"
	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/callargs"
	"github.com/mcpbridge/mcpbridge/internal/childproc"
	"github.com/mcpbridge/mcpbridge/internal/cliententry"
	"github.com/mcpbridge/mcpbridge/internal/confedit"
	"github.com/mcpbridge/mcpbridge/internal/importconf"
	"github.com/mcpbridge/mcpbridge/internal/scopes"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
)

// add adds a server to a config file: a stdio command after "--", or a
// remote server by URL (Claude Code's `claude mcp add` forms, and --url).
func (e *env) add(ctx context.Context, argv []string) error {
	f, err := parseFlags("add", specOf("add"), argv)
	if err != nil {
		return err
	}
	if f.fromRegistry != "" || f.pkg != "" || f.remote != "" {
		return e.addFromRegistry(ctx, f)
	}
	entry, err := newEntry(f, argv)
	if err != nil {
		return err
	}
	return e.addEntry("add", f, f.args[0], entry)
}

// addEntry writes entry, named name, to the file of f's scope, and says
// what it added where, warning (as cmd) of each secret it wrote as it is
// to a file that may be shared: the project's, or one named.
func (e *env) addEntry(cmd string, f *flags, name string, entry *yaml.Node) error {
	path, scope, err := e.addPath(cmd, f)
	if err != nil {
		return err
	}
	err = e.editConfig(path, name, func(data []byte, doc, list *yaml.Node) ([]byte, error) {
		if i := confedit.Find(list, name); i >= 0 {
			return nil, nameTaken(path, name, list.Content[i])
		}
		return confedit.Append(data, doc, list, entry)
	})
	if err != nil {
		return err
	}
	where := path
	if scope != "" {
		where += " (" + scope + " scope)"
	}
	fmt.Fprintf(e.Stdout, "Added %s server %q to %s\n", cliententry.Transport(entry), name, where)
	e.notePinned(cmd, path, name, f)
	if scope == scopes.Local || scope == scopes.User {
		return nil // the user's own files
	}
	for _, s := range cliententry.LiteralSecrets(entry) {
		msg := fmt.Sprintf("mcpbridge: %s: the value of %s is written as it is to %s, a file often shared: write it as ${%s} (and export %s)", cmd, s.Name, path, s.Var, s.Var)
		if scope != "" {
			msg += ", or add the server with --scope local or --scope user"
		}
		fmt.Fprintln(e.Stderr, msg)
	}
	return nil
}

// nameTaken is add's refusal of a name entry has at path: a server is
// removed first, another kind of entry (which remove does not take)
// keeps it.
func nameTaken(path, name string, entry *yaml.Node) error {
	if cliententry.IsServer(entry) {
		return usagef("add: %s already has a server %q (line %d); remove it first", path, name, entry.Line)
	}
	return usagef("add: %s already has %s %q (line %d); give the server another name", path, cliententry.KindOf(entry), name, entry.Line)
}

// addPath is the file add writes: --config, MCPBRIDGE_CONFIG, --scope's
// file, else the project file when there is one, else the user file.
// Its errors are cmd's (add or add-json).
func (e *env) addPath(cmd string, f *flags) (path, scope string, err error) {
	if files := e.configFiles(f); len(files) == 1 && files[0].Scope == "" {
		if f.scope != "" {
			return "", "", usagef("%s: --scope and --config (or MCPBRIDGE_CONFIG) cannot be used together", cmd)
		}
		return files[0].Path, "", nil
	}
	scope = f.scope
	if scope == "" {
		scope = scopes.User
		if scopes.ProjectPath() != "" {
			scope = scopes.Project
		}
	}
	path, err = e.scopePath(cmd, scope)
	return path, scope, err
}

// scopePath is the file of a scope: the project file found, else
// ./mcpbridge.yaml; the user file. Its errors are cmd's.
func (e *env) scopePath(cmd, scope string) (string, error) {
	switch scope {
	case scopes.Project:
		if p := scopes.ProjectPath(); p != "" {
			return p, nil
		}
		return scopes.ProjectFile, nil
	case scopes.User:
		if p := e.userConfigPath(); p != "" {
			return p, nil
		}
		return "", usagef("%s: --scope user: neither XDG_CONFIG_HOME nor HOME is set", cmd)
	case scopes.Local:
		if p := scopes.LocalPath(e.getenv); p != "" {
			return p, nil
		}
		return "", usagef("%s: --scope local: neither XDG_CONFIG_HOME nor HOME is set", cmd)
	default:
		return "", usagef("%s: --scope %q: want local (yours, this project only), project (shared with the project) or user (yours, every project)", cmd, scope)
	}
}

// remove removes the server whose id or serverName is NAME, from the
// file that has it: --config's, --scope's, else the project file, then
// the user file. An entry of another kind is refused.
func (e *env) remove(argv []string) error {
	f, err := parseFlags("remove", specOf("remove"), argv)
	if err != nil {
		return err
	}
	if len(f.args) != 1 {
		return usagef("remove: want NAME, got %d arguments", len(f.args))
	}
	name := f.args[0]
	files, err := e.removeCandidates(f)
	if err != nil {
		return err
	}
	var known, looked []string
	for _, path := range files {
		if !exists(path) {
			continue
		}
		looked = append(looked, path)
		data, err := host.ReadConfigFile(path)
		if err != nil {
			return &configError{err}
		}
		_, list, err := editableList(path, data)
		if err != nil {
			return err
		}
		i := confedit.Find(list, name)
		if i < 0 {
			known = append(known, confedit.Names(list)...)
			continue
		}
		if err := cliententry.NotServer("remove", name, path, list.Content[i]); err != nil {
			return usagef("%v", err)
		}
		err = e.editConfig(path, "", func(data []byte, doc, list *yaml.Node) ([]byte, error) {
			return confedit.Remove(data, doc, list, confedit.Find(list, name))
		})
		if err == nil {
			fmt.Fprintf(e.Stdout, "Removed server %q from %s\n", name, path)
		}
		return err
	}
	if len(looked) == 0 {
		return usagef("remove: there is no config file to remove %q from (looked for %s)", name, strings.Join(files, " and "))
	}
	msg := fmt.Sprintf("remove: %s has no server %q", strings.Join(looked, " or "), name)
	if s := yamlconf.Suggest(name, known); s != "" {
		msg += fmt.Sprintf(": did you mean %q?", s)
	}
	return usagef("%s", msg)
}

// removeCandidates are the files remove looks in, in order.
func (e *env) removeCandidates(f *flags) ([]string, error) {
	if files := e.configFiles(f); len(files) == 1 && files[0].Scope == "" {
		if f.scope != "" {
			// As add: which file was meant cannot be told.
			return nil, usagef("%s: --scope and --config (or MCPBRIDGE_CONFIG) cannot be used together", "remove")
		}
		return []string{files[0].Path}, nil
	}
	if f.scope != "" {
		p, err := e.scopePath("remove", f.scope)
		return []string{p}, err
	}
	var out []string
	for _, scope := range []string{scopes.Project, scopes.User, scopes.Local} {
		if p, err := e.scopePath("remove", scope); err == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// newEntry builds the entry add appends, from NAME and what follows:
// a URL (or --url) for a remote server, else a command (when argv has
// "--", what follows it).
func newEntry(f *flags, argv []string) (*yaml.Node, error) {
	if len(f.args) == 0 {
		return nil, usagef("add: want NAME -- COMMAND [ARGS...], NAME URL or NAME --url URL")
	}
	dash := slices.Index(argv, "--")
	dashed := dash >= 0
	if dashed && len(argv)-dash-1 == len(f.args) {
		// Every argument came after "--": the command's first word is
		// no server's name.
		quoted := make([]string, len(f.args))
		for i, a := range f.args {
			quoted[i] = shellQuote(a)
		}
		return nil, usagef("add: want the server's NAME before --: mcpbridge add NAME -- %s", strings.Join(quoted, " "))
	}
	entry, err := cliententry.New(cliententry.Args{Name: f.args[0], Rest: f.args[1:], Dashed: dashed, URL: f.url,
		Transport: f.transport, Headers: f.headers, Env: f.env, Cmd: addLine(f)})
	if err != nil {
		return nil, usagef("%v", err)
	}
	return entry, nil
}

// addLine is "mcpbridge add" and the flags of f that say where the entry
// goes and what it holds, a remote server's (remote: its headers) or a
// command's (its env), for the line a refusal suggests; a secret's value
// is shown as [redacted].
func addLine(f *flags) func(remote bool) string {
	return func(remote bool) string {
		line := "mcpbridge add"
		for _, o := range []struct{ flag, value string }{{"--config", f.config}, {"--scope", f.scope}, {"--transport", f.transport}} {
			if o.value != "" {
				line += " " + o.flag + " " + shellQuote(o.value)
			}
		}
		if remote {
			return line + headerArgs(f.headers)
		}
		for _, kv := range f.env {
			if name, _, ok := strings.Cut(kv, "="); ok && childproc.SecretName(name) {
				kv = name + "=[redacted]"
			}
			line += " --env " + shellQuote(kv)
		}
		return line
	}
}

// editConfig reads the config file at path (none is an empty list), lets
// change edit it, checks the entry id it adds (none: "") and replaces the
// file atomically, creating its directory when missing.
func (e *env) editConfig(path, id string, change func(data []byte, doc, list *yaml.Node) ([]byte, error)) error {
	data, err := host.ReadConfigFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &configError{err}
	}
	doc, list, err := editableList(path, data)
	if err != nil {
		return err
	}
	out, err := change(data, doc, list)
	if err != nil {
		return err
	}
	if err := e.checkEdited(path, out, id); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return confedit.Write(path, out)
}

// entryList is confedit.Parse, its error a config error (exit status).
func entryList(path string, data []byte) (*yaml.Node, *yaml.Node, error) {
	doc, list, err := confedit.Parse(path, data)
	if err != nil {
		return nil, nil, &configError{err}
	}
	return doc, list, nil
}

// editableList is entryList for a file add and remove may edit: mcpbridge
// YAML, not another client's config.
func editableList(path string, data []byte) (*yaml.Node, *yaml.Node, error) {
	if format := importconf.Detect(data); format != importconf.FormatYAML {
		return nil, nil, usagef("%s is a %s; add and remove edit mcpbridge YAML (mcpbridge import %s > mcpbridge.yaml converts it)", path, format, path)
	}
	return entryList(path, data)
}

// checkEdited validates the edited file as every command would read it:
// a file that no longer parses is refused, and so is an added entry (id)
// with a problem, except that variables need not be set in this shell (a
// server's secret is set where it runs). The entry's problems are named by
// field, not by a position in a file that was not written.
func (e *env) checkEdited(path string, data []byte, id string) error {
	plan, err := e.catalog(true).ParseIsolated(path, data, e.lookup)
	if err != nil {
		if msgs := problems(addedErrors(err, data, id)); len(msgs) > 0 {
			return notAdded(id, msgs)
		}
		return &configError{fmt.Errorf("%s was left unchanged: the result would not be valid:\n%w", path, err)}
	}
	for _, pe := range plan.Invalid() {
		if pe.Entry.ID != id {
			continue
		}
		var ces confpos.Errors
		errors.As(pe.Err, &ces)
		if msgs := problems(ces); len(msgs) > 0 {
			return notAdded(id, msgs)
		}
	}
	return nil
}

// addedErrors are the problems of the file-level error err that are the
// added entry's (id; none: ""), such as an id that is not valid: the
// entry is then named by its place in data's list.
func addedErrors(err error, data []byte, id string) confpos.Errors {
	var ces confpos.Errors
	if id == "" || !errors.As(err, &ces) {
		return nil
	}
	_, list, perr := confedit.Parse("", data)
	if perr != nil {
		return nil
	}
	i := confedit.Find(list, id)
	var out confpos.Errors
	for _, ce := range ces {
		if ce.EntryID == id || i >= 0 && ce.EntryID == "" && ce.EntryIndex == i+1 {
			out = append(out, ce)
		}
	}
	return out
}

// problems are ces as "field: message" lines, less the variables not set
// in this shell.
func problems(ces confpos.Errors) []string {
	var msgs []string
	for _, ce := range ces {
		if !strings.Contains(ce.Msg, "is not set (use ${") {
			msgs = append(msgs, ce.Path+": "+ce.Msg)
		}
	}
	return msgs
}

// notAdded is the refusal of an added entry with problems.
func notAdded(id string, msgs []string) error {
	return usagef("server %q not added, it would not be valid:\n%s", id, strings.Join(msgs, "\n"))
}

// addJSON adds a server given as Claude Code's JSON for one server
// ({"type": "stdio", "command": …} or {"type": "http", "url": …}), as
// `claude mcp add-json NAME JSON` does, converted as import converts an
// mcpServers file.
func (e *env) addJSON(argv []string) error {
	f, err := parseFlags("add-json", specOf("add-json"), argv)
	if err != nil {
		return err
	}
	if len(f.args) != 2 {
		return usagef("add-json: want NAME JSON, got %d arguments", len(f.args))
	}
	name, raw := f.args[0], strings.TrimSpace(f.args[1])
	if !json.Valid([]byte(raw)) {
		return usagef("add-json: the server is not valid JSON: %s", callargs.JSONError([]byte(raw)))
	}
	if !strings.HasPrefix(raw, "{") {
		return usagef(`add-json: want a JSON object, like '{"type": "http", "url": "https://…"}', got %s`, callargs.JSONKind(raw[0]))
	}
	wrapped, _ := json.Marshal(map[string]map[string]json.RawMessage{"mcpServers": {name: json.RawMessage(raw)}})
	res, err := importconf.Convert("JSON", wrapped)
	if err != nil {
		return usagef("add-json: %v", err)
	}
	_, list, err := entryList("JSON", res.YAML)
	if err != nil || len(list.Content) != 1 {
		return usagef("add-json: the JSON does not describe one server")
	}
	entry := list.Content[0]
	transport := yamlconf.Locate(entry, "config.transport")
	refused := transport == nil || transport.Kind != yaml.ScalarNode || transport.Value == ""
	if err := e.jsonNotes(res.Notes, name, refused); err != nil {
		return err
	}
	if refused {
		return usagef(`add-json: server %q not added: it has neither "command" (a stdio server) nor "url" (an HTTP server), `+
			`like '{"type": "stdio", "command": "npx", "args": ["-y", "PACKAGE"]}' or '{"type": "http", "url": "https://…/mcp"}'`, name)
	}
	entry.HeadComment, entry.LineComment, entry.FootComment = "", "", ""
	// The converter makes NAME a valid server name (docs.v2 → docs-v2):
	// the entry is added, checked and named under the name it got.
	if id := confedit.Value(entry, "id"); id != nil && id.Value != name {
		fmt.Fprintf(e.Stderr, "mcpbridge: add-json: %q is added as %q, a valid server name\n", name, id.Value)
		name = id.Value
	}
	return e.addEntry("add-json", f, name, entry)
}

// jsonNotes prints the notes of add-json's conversion of the server name,
// less the one on the whole server when it is refused for
// having nothing to run (that refusal says it, with what to write). A
// mistake among them, like a misspelt "header", refuses the server: the
// one written would not be the one meant.
func (e *env) jsonNotes(notes []importconf.Note, name string, refused bool) error {
	root := "mcpServers." + name
	var mistakes []string
	for _, n := range notes {
		field := strings.TrimPrefix(n.Path, root+".")
		switch {
		case refused && n.Path == root:
		case n.Mistake:
			mistakes = append(mistakes, field+": "+n.Msg)
		default:
			fmt.Fprintf(e.Stderr, "mcpbridge: add-json: %s: %s\n", field, n.Msg)
		}
	}
	if len(mistakes) > 0 {
		return notAdded(name, mistakes)
	}
	return nil
}
