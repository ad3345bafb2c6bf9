package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpbridge/mcpbridge/internal/buildinfo"
	"github.com/mcpbridge/mcpbridge/internal/demo"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
)

// command is one subcommand: the line the overview shows, its own help,
// and what runs it. A new command is one more line in commands.
type command struct {
	name     string
	synopsis string // after "mcpbridge "
	summary  string // one line
	details  string // its own help beyond synopsis and summary: flags, notes
	run      func(e *env, ctx context.Context, argv []string) error
}

// commands is every subcommand, in the order help lists them.
func commands() []command {
	return []command{
		{"tools", "tools [SOURCE] [--json] [--tokens] [--timings] [NAME]", "list the tools under their public names, or show one in full", toolsHelp, (*env).tools},
		{"call", "call [SOURCE] [--json] [--elicit MODE] [--save-dir DIR] [--timeout D] [--task] NAME [ARGS_JSON | -] [--arg K=V]...", "call a tool by its public name", callHelp, (*env).call},
		{"search", "search [SOURCE] [--json] [--limit K] QUERY | -", "the tools that fit a request, best first", searchHelp, (*env).search},
		{"resources", "resources [SOURCE] [--json]", "list the servers' resources and resource templates", "", (*env).resources},
		{"read", "read [SOURCE] [--json] [--server NAME] URI", "print a resource (a templated URI finds its server)", readHelp, (*env).read},
		{"prompts", "prompts [SOURCE] [--json]", "list the prompts under their public names", "", (*env).prompts},
		{"prompt", "prompt [SOURCE] [--json] NAME [ARGS_JSON] [--arg K=V]...", `render a prompt's messages ("role: text")`, promptHelp, (*env).prompt},
		{"skills", "skills [SOURCE] [--json]", "list the servers' skills (Agent Skills over MCP), reading none of their files", "", (*env).skills},
		{"skill", "skill [SOURCE] NAME", "print a skill's SKILL.md once its digest, size and frontmatter match the listing", skillHelp, (*env).skill},
		{"agent", "agent [SOURCE] [-p PROMPT | -p -] [--json] [--yes] [--model M] [--base-url URL] [--max-steps N] [--resume ID | --continue] [--code-mode]", "a model with every tool: headless with -p, else at the terminal", agentHelp, (*env).agent},
		{"status", "status [SOURCE] [--json] [--timings]", "start the servers and show each one's state", statusHelp, (*env).status},
		{"logs", "logs [SOURCE] NAME", "start one server and print what it wrote on stderr (escaped, secrets redacted)", logsHelp, (*env).logs},
		{"list", "list [--config FILE] [--json]", "list the configured servers and where each comes from, starting nothing", "", noContext((*env).list)},
		{"get", "get [--config FILE] [--json] NAME", "show one configured server (env and header names, never values), starting nothing", "", noContext((*env).get)},
		{"pin", "pin [SOURCE] [--diff] [SERVER...]", "record the tools' and prompts' definitions in mcpbridge.lock; withhold any that change", pinHelp, (*env).pinCmd},
		{"scan", "scan [SOURCE] [--json]", "scan the tool and prompt definitions for instructions aimed at the model", scanHelp, (*env).scan},
		{"audit", "audit verify [--after HASH] FILE...", "check that a gateway audit trail's hash chain is intact", auditHelp, noContext((*env).auditCmd)},
		{"validate", "validate [--config FILE]", "check a config file without starting anything", "", noContext((*env).validate)},
		{"serve", "serve [SOURCE] (--stdio | --http [ADDR] [--token-env NAME] [--allow-origin ORIGIN]... [--insecure-no-auth-on-network]) [--raw-names] [--stateless] [--ready-timeout D] [--metrics-addr ADDR] [--code-mode] [--console]", "serve every tool as one MCP server, hot-reloading the config", serveHelp, (*env).serve},
		{"login", "login NAME [--config FILE] | --url URL [--name NAME]", "log in to a server that uses OAuth and store its tokens", loginHelp, (*env).login},
		{"logout", "logout NAME [--config FILE] | --url URL", "forget a server's stored OAuth tokens", "", (*env).logout},
		{"add", "add [--scope local|project|user] [--config FILE] [--transport stdio|http|sse] [-e K=V]... [-H 'K: V']... (NAME (URL | --url URL | -- COMMAND [ARGS...]) | --from-registry NAME[@VERSION] [--package TYPE | --remote N] [NAME])", "add a server to a config file (created when missing)", addHelp, (*env).add},
		{"add-json", "add-json [--scope local|project|user] [--config FILE] NAME JSON", "add a server given as Claude Code's JSON ({\"type\": \"http\", \"url\": …})", editHelp, noContext((*env).addJSON)},
		{"remove", "remove [--scope local|project|user] [--config FILE] NAME", "remove a server from a config file", editHelp, noContext((*env).remove)},
		{"registry", "registry search [--json] QUERY | show [--json] NAME[@VERSION] | outdated [SOURCE] [--json]", "find servers in the MCP Registry, and entries with a newer version there", registryHelp, (*env).registryCmd},
		{"import", "import FILE", "print another client's MCP config (mcpServers JSON, Codex TOML) as mcpbridge YAML", importHelp, noContext((*env).importConfig)},
		{"completion", "completion bash|zsh|fish", "print a shell completion script", completionHelp, noContext((*env).completion)},
		{"demo-server", "demo-server", "run the built-in demo MCP server on stdio", "", func(_ *env, ctx context.Context, _ []string) error { return demo.Run(ctx) }},
		{"version", "version", "print the version and the commit it was built from (also --version)", "", noContext((*env).version)},
	}
}

// commandSpecs are the flags of each command that takes any beyond the
// global ones: parseFlags reads them here, and help and the completion
// scripts list them, so a flag is added in one place.
func commandSpecs() map[string]flagSpec {
	oneShot := flagSpec{source: true, json: true, timings: true}
	browse := flagSpec{source: true, json: true}
	return map[string]flagSpec{
		"tools":     {source: true, json: true, timings: true, tokens: true},
		"call":      {source: true, json: true, save: true, arg: true, task: true},
		"search":    {source: true, json: true, limit: true},
		"resources": browse,
		"read":      {source: true, json: true, server: true},
		"prompts":   browse,
		"prompt":    {source: true, json: true, arg: true},
		"skills":    browse,
		"skill":     {source: true},
		"status":    oneShot,
		"logs":      {source: true},
		"list":      {config: true, json: true},
		"get":       {config: true, json: true},
		"validate":  {config: true},
		"serve":     {source: true, serve: true},
		"login":     {source: true},
		"logout":    {source: true},
		"add":       {config: true, edit: true, scope: true, reg: true},
		"add-json":  {config: true, scope: true},
		"remove":    {config: true, scope: true},
		"agent":     {source: true, json: true, agent: true},
		"pin":       {source: true, diff: true},
		"scan":      {source: true, json: true},
		"registry":  {source: true, json: true},
		"audit":     {after: true},
	}
}

// specOf is the flag spec of the command called name (no flags of its
// own when it has none in commandSpecs).
func specOf(name string) flagSpec { return commandSpecs()[name] }

// flagsOf lists the flags the command called name accepts, global ones
// included, as "--name" (and "-x" for a one-letter alias), with the
// value each takes ("" for none).
func flagsOf(name string) (names []string, values []string) {
	spec := specOf(name)
	for _, def := range flagDefs() {
		if !def.accept(spec) {
			continue
		}
		for _, n := range def.names {
			dash := "--"
			if len(n) == 1 {
				dash = "-"
			}
			names, values = append(names, dash+n), append(values, def.value)
		}
	}
	return names, values
}

// noContext adapts a command that needs no context.
func noContext(run func(*env, []string) error) func(*env, context.Context, []string) error {
	return func(e *env, _ context.Context, argv []string) error { return run(e, argv) }
}

// findCommand returns the command called name.
func findCommand(name string) (command, bool) {
	cmds := commands()
	i := slices.IndexFunc(cmds, func(c command) bool { return c.name == name })
	if i < 0 {
		return command{}, false
	}
	return cmds[i], true
}

// unknownCommand says so, with the command name closest to name.
func unknownCommand(name string) error {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	if s := yamlconf.Suggest(name, names); s != "" {
		return usagef("unknown command %q: did you mean %q? (see 'mcpbridge help')", name, s)
	}
	return usagef("unknown command %q (see 'mcpbridge help')", name)
}

// suggestTool prints, for a tool name that is not there, what is known of
// it (toolHint), if anything.
func (e *env) suggestTool(name string, b *bridge) {
	if hint := toolHint(name, b); hint != "" {
		fmt.Fprintf(e.Stderr, "mcpbridge: no tool %q: %s\n", name, hint)
	}
}

// toolHint is, for a tool name that is not there, what helps: that its
// server is not configured (and which are), and the name meant
// (toolMeant); "" when neither applies.
func toolHint(name string, b *bridge) string {
	var hints []string
	if s := serverOf(name); s != "" && !slices.Contains(b.servers(), s) {
		which := "none is"
		if len(b.servers()) > 0 {
			which = "servers: " + strings.Join(b.servers(), ", ")
		}
		hints = append(hints, fmt.Sprintf("no server %q is configured (%s)", s, which))
	}
	if meant := toolMeant(name, b); meant != "" {
		hints = append(hints, "did you mean "+meant+"?")
	}
	return strings.Join(hints, "; ")
}

// toolMeant is, for a tool name that is not there, the name meant: the
// one whose raw name is name ("echo" for mcp__everything__echo), else the
// closest within two typos, else, for a public name, another server's
// tool of its raw name; "" when none is close.
func toolMeant(name string, b *bridge) string {
	var names []string
	for _, t := range b.reg.List() {
		if strings.HasSuffix(t.Name, "__"+name) {
			return t.Name
		}
		names = append(names, t.Name)
	}
	if s := yamlconf.Suggest(name, names); s != "" {
		return s
	}
	if server := serverOf(name); server != "" {
		raw := strings.TrimPrefix(name, "mcp__"+server)
		if i := slices.IndexFunc(names, func(n string) bool { return strings.HasSuffix(n, raw) }); i >= 0 {
			return names[i]
		}
	}
	return ""
}

const sourceHelp = `SOURCE (default: $MCPBRIDGE_CONFIG; else the user config $XDG_CONFIG_HOME/mcpbridge/config.yaml,
the project's mcpbridge.yaml (here or up to the repository root) and your own config for the
project (add's local scope), merged by id, the later replacing the earlier; else the embedded
demo config):
  --config FILE                   a YAML file of server entries, or another client's config:
                                  an mcpServers JSON (Claude Desktop, Claude Code, Cursor, Gemini CLI)
                                  or a Codex config.toml
  --url URL [--name NAME] [--header 'K: V']...
                                  one Streamable HTTP server (serverName from --name, default "remote")
  --oauth-headless                authorize OAuth servers without a browser: take the code from the
                                  authorization server's redirect (servers that approve without a
                                  person: test and CI servers)
  --elicit decline|cancel|defaults
                                  how a server that asks for input (elicitation) is answered without a
                                  person at the terminal (default decline; defaults: each field's default)
`

const globalHelp = `Flags (before or after the command):
  -v, --verbose   show servers' log lines (stderr)
  --log-format text|json
                  log lines as text (default) or one JSON object each
  -h, --help      help for the command
'mcpbridge --version' (or 'mcpbridge version') prints the version and commit.
`

// usageText is the overview 'mcpbridge help' prints.
func usageText() string {
	var b strings.Builder
	b.WriteString("mcpbridge connects to MCP servers and shows their tools as a model sees them.\n\nUsage:\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "  mcpbridge %s\n      %s\n", c.synopsis, c.summary)
	}
	b.WriteString("\n" + sourceHelp + "\n" + globalHelp)
	b.WriteString("\n'mcpbridge help COMMAND' or 'mcpbridge COMMAND --help' shows a command's flags.\n")
	b.WriteString("Exit status: 0 success, 1 a failed call or server, 2 a usage or config error.\n")
	return b.String()
}

// helpText is the help of one command.
func (c command) helpText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: mcpbridge %s\n\n%s.\n", c.synopsis, upperFirst(c.summary))
	if c.details != "" {
		b.WriteString("\n" + c.details)
	}
	if specOf(c.name).source {
		b.WriteString("\n" + sourceHelp)
	}
	b.WriteString("\n" + globalHelp)
	return b.String()
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// wantsHelp reports whether -h or --help is among the flags of argv
// (before "--", after which arguments belong to a server's command line).
func wantsHelp(argv []string) bool {
	for _, a := range argv {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// hoist moves the flags written before the command behind it, so that
// 'mcpbridge -v tools' is 'mcpbridge tools -v': the command is the first
// argument that names one, and what stands before it must be flags (and
// their values). Without a command, a --version or --help among the flags
// is the command.
func hoist(args []string) []string {
	for i, a := range args {
		if _, ok := findCommand(a); ok {
			return slices.Concat([]string{a}, args[:i], args[i+1:])
		}
		flagValue := i > 0 && strings.HasPrefix(args[i-1], "-") && !strings.Contains(args[i-1], "=")
		if a == "--" || !strings.HasPrefix(a, "-") && !flagValue {
			break
		}
	}
	for _, special := range []string{"--version", "--help", "-h"} {
		if i := slices.Index(args, special); i > 0 && strings.HasPrefix(args[0], "-") {
			return slices.Concat([]string{special}, args[:i], args[i+1:])
		}
	}
	return args
}

// positional drops the flags of argv: -v and --help change nothing in
// help and version.
func positional(argv []string) []string {
	return slices.DeleteFunc(slices.Clone(argv), func(a string) bool { return strings.HasPrefix(a, "-") })
}

// help is 'mcpbridge help [COMMAND]'.
func (e *env) help(argv []string) error {
	argv = positional(argv)
	if len(argv) == 0 {
		fmt.Fprint(e.Stdout, usageText())
		return nil
	}
	c, ok := findCommand(argv[0])
	if !ok {
		return unknownCommand(argv[0])
	}
	fmt.Fprint(e.Stdout, c.helpText())
	return nil
}

// version prints mcpbridge's version and the module version and commit
// of this binary.
func (e *env) version(argv []string) error {
	if argv = positional(argv); len(argv) > 0 {
		return usagef("version: unexpected argument %q", argv[0])
	}
	fmt.Fprintln(e.Stdout, "mcpbridge "+buildinfo.Describe())
	return nil
}

const toolsHelp = `The list shows the first line of each description; with NAME, that tool in full: its whole
description, input and output schemas, title and annotations (only its server is started).
  --json      the chat-completions "tools" array (with NAME: that tool's entry)
  --tokens    each tool definition's tokens (o200k_base), and each server's total; with
              --json an object {"encoding", "total", "tools": [{"name", "server", "tokens"}],
              "servers": [{"server", "tools", "tokens"}]} instead of the chat array
  --timings   how long each server took to connect and list its tools (stderr)
`

const callHelp = `ARGS_JSON is a JSON object ('{"a": 1}'); "-" reads it from stdin. Prints the text the
model would see; exit status 1 when the call fails.
  --arg K=V         one argument (repeatable, over ARGS_JSON), typed by the tool's input schema:
                    a number, a boolean, JSON for an object or an array; an unknown key or a value
                    of the wrong type is refused before the call
  --timeout D       cancel the call after D (e.g. 30s)
  --json            the registry result: isError, content, value (the raw MCP result), error
  --save-dir DIR    where images and audio of the result are saved, named by content hash
                    (default: the per-user cache directory, e.g. ~/.cache/mcpbridge)
  --task            run a tool whose taskSupport is optional as an MCP task (required ones
                    always are): polled until done, its status on the progress line
`

const agentHelp = `The model is the config's model entry (else its sampling entry; a SOURCE without either
takes the user config's); DeepSeek's API with deepseek-flash only when neither has one and no
--base-url is given. An invalid model or
sampling entry stops the agent (exit 2) before anything is sent. The key is read from
DEEPSEEK_API_KEY or the variable the entry names in apiKeyEnv (apiKeyEnv: "" or apiKey: none: the
endpoint takes no key); sent over http:// to another machine, a warning says it travels in clear.
  -p, --prompt PROMPT  run headless: print the final answer on stdout ("-" reads the prompt
                    from stdin)
  --json            with -p, JSON lines: session, reasoning, text, tool_call, tool_result, usage,
                    notice, and a last result line with the answer and the usage totals
  --yes, -y         run every tool call without asking (permissions.deny still refuses); with -p
                    nothing else runs but what the user config's permissions.allow lists and the
                    read-only tools of servers marked trusted: true
  --model M         the model instead of the entry's
  --base-url URL    an OpenAI-compatible API instead of the entry's
  --max-steps N     at most N model requests per prompt (default 50); exit status 3 when reached
  --resume ID       continue a saved session ($XDG_STATE_HOME/mcpbridge/sessions/ID.jsonl)
  --continue        continue the session used last (the one last written to)
  --code-mode       the model writes programs against the tools as a TypeScript API (run_code,
                    describe_api, search_api) instead of calling them one by one; each call a
                    program makes is approved like a direct one (docs/codemode.md)
Exit status: 0 done, 1 a model or tool failure, 2 usage, 3 --max-steps reached.
`

const searchHelp = `Ranks the tools for a request in plain language. "-" reads one query per line of stdin
and prints one line of names each.
  --limit K   how many tools (default 5)
  --json      an array of {"name", "score", "description"}
`

const loginHelp = `Opens the authorization URL in a browser when there is one (and prints it), receives the
code on a loopback redirect, and stores the tokens under $XDG_STATE_HOME/mcpbridge/oauth
(0700 directory, 0600 files). tools, call and serve never open a browser: a server that
needs a login shows as needs-login in status, with this command to run.
`

const promptHelp = `ARGS_JSON is a JSON object of strings ('{"style": "short"}').
  --arg K=V   one argument (repeatable, over ARGS_JSON); a key the prompt does not list is
              refused before it is rendered
`

const readHelp = `  --server NAME   the server to read from, when more than one offers the URI
`

const statusHelp = `  --json      servers' states for scripts
  --timings   how long each server took to connect and list its tools (stderr)
`

const serveHelp = `  --stdio                         serve MCP on stdin/stdout (for clients that launch servers)
  --http [ADDR]                   serve Streamable HTTP (default 127.0.0.1:7410; MCP at /mcp, health at /healthz)
  --raw-names                     serve each tool under its server's own name (the first server in the
                                  config keeps a name two servers offer; the log says which was left out)
  --ready-timeout D               hold requests other than initialize until the servers have started,
                                  at most D (e.g. 30s; default: the largest startupTimeoutMs; 0: do not wait)
  --token-env NAME                (--http) require "Authorization: Bearer $NAME" on every request
  --allow-origin ORIGIN           (--http) a browser origin allowed besides loopback ones, as the browser
                                  sends it: scheme://host[:port] (repeatable; "*" and "null" are refused)
  --insecure-no-auth-on-network   (--http) allow a non-loopback ADDR without a token
  --stateless                     (--http) no sessions: any replica behind a round-robin balancer answers
                                  any request (2026-07-28 clients; older ones get no notifications)
  --metrics-addr ADDR             also serve /metrics (Prometheus) and the probes /healthz, /readyz, /livez
                                  alone on ADDR, without auth (for the scraper and the kubelet; /metrics is
                                  on the --http listener too, behind its checks)
  --code-mode                     list search_api, describe_api and run_code instead of the tools: clients
                                  write one program against the tools as a TypeScript API; each call it
                                  makes is the caller's, gated and audited (docs/codemode.md)
  --console                       (--http) a web console at /console: servers (restart, reload), tools
                                  (try them), traffic (calls, tasks, parked calls, per-tool charts), audit;
                                  sign in with a token the gateway entry's console grants, or, with
                                  no identities, $MCPBRIDGE_CONSOLE_TOKEN (else serve prints one it made);
                                  see docs/console.md

A gateway entry in the config (auth: OAuth issuer and static tokens, policy, rateLimit, audit)
says who may call and what, and records it; see docs/operations.md §9. Its questionWaitMs
(default 30000) is how long a call parked for a 2026-07-28 client's answers waits for them
before it is cancelled. Its store (redis: url,
keyPrefix, tls; taskLease; advertise) makes one rate limit hold across replicas, any --stateless
replica answer a task's tasks/get and tasks/cancel, and any replica serve a session or a
parked call another holds (proxied to it, at its advertise address); see §11.
`

const editHelp = `The file is edited in place: its comments and order are kept, the result is validated
before it is written, and it is replaced atomically.
  --scope S          project (./mcpbridge.yaml, found up to the repository root: shared with the
                     project), user ($XDG_CONFIG_HOME/mcpbridge/config.yaml: yours, every project) or
                     local (yours, this project only: $XDG_CONFIG_HOME/mcpbridge/projects/DIR-HASH/
                     config.yaml, for the project file's directory, else the repository root, else
                     here); default: project when that file exists, else user (remove: the file that
                     has NAME)
  --config FILE      this file instead (also $MCPBRIDGE_CONFIG)
`

const addHelp = editHelp + `  -e, --env K=V      an environment variable of a stdio server (repeatable)
  -H, --header 'K: V' an HTTP header of a remote server (repeatable)
  --transport T      stdio (with a command), http (Streamable HTTP, the default with a URL) or sse,
                     the legacy HTTP+SSE transport
  --url URL          the server's URL (also accepted after NAME)
  --from-registry NAME[@VERSION] | FILE
                     the server as the MCP Registry describes it (or a server.json file, offline),
                     in place of a URL or command; NAME after it names the entry (default: the
                     registry name after its "/"). Required variables become ${VAR} references,
                     listed on stderr; the entry records registry: {name, version}
  --package TYPE     with --from-registry: its first package of TYPE (npm, pypi, oci, nuget)
  --remote N         with --from-registry: its Nth remote (mcpbridge registry show numbers them)
`

const importHelp = `Reads the mcpServers JSON of Claude Desktop, Claude Code (.mcp.json), Cursor or Gemini CLI
(settings.json), or Codex's config.toml, and prints the same servers as mcpbridge YAML. Fields
mcpbridge does not use are named in comments and on stderr. The other commands read these files
as they are (as a SOURCE); import is for moving to mcpbridge's own format.

What it prints is checked as validate checks a file (with this environment's variables). When
that fails, import still prints every server, says on stderr what is wrong with each at its
place in FILE (the server's name and key there, like mcpServers.web.url) and exits 2: correct
FILE and import it again, or edit what was printed. An env value given as a number (VS Code
allows it) is written as its string, with a note.
`

const completionHelp = `Prints a completion script for the shell, made for the name this binary runs as: each
command's own flags and their values, tool names after 'call' and 'tools', prompt names after
'prompt' and URIs after 'read' from the config on the line (its servers are started to list
them), entry names after 'get' and 'remove'. For example:
  bash:  source <(mcpbridge completion bash)
  zsh:   source <(mcpbridge completion zsh)
  fish:  mcpbridge completion fish | source
`
