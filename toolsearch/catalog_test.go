package toolsearch

import (
	"context"
	"encoding/json"

	"github.com/mcpbridge/mcpbridge/tool"
)

// param is one input parameter of a catalog tool: its name and
// description, and the string values it takes when it is an enum.
type param struct {
	name, desc string
	enum       []string
}

func arg(name, desc string, enum ...string) param { return param{name, desc, enum} }

// mk builds a tool the way the bridge publishes an MCP server's tool:
// public name mcp__<server>__<raw>, Origin set, an object input schema.
func mk(server, raw, desc string, params ...param) tool.Tool {
	props := make(map[string]any, len(params))
	for _, q := range params {
		prop := map[string]any{"type": "string", "description": q.desc}
		if q.enum != nil {
			prop["enum"] = q.enum
		}
		props[q.name] = prop
	}
	schema, err := json.Marshal(map[string]any{"type": "object", "properties": props})
	if err != nil {
		panic(err)
	}
	return tool.Tool{
		Name:        "mcp__" + server + "__" + raw,
		Description: desc,
		InputSchema: schema,
		Origin:      tool.Origin{Server: server, Name: raw},
		Execute: func(context.Context, json.RawMessage) (tool.Output, error) {
			return tool.Output{}, nil
		},
	}
}

var (
	owner = arg("owner", "Repository owner")
	repo  = arg("repo", "Repository name")
	ghNum = arg("issue_number", "The number of the issue")
	prNum = arg("pullNumber", "Pull request number")
	glPrj = arg("project_id", "Project ID or URL-encoded path")
	path  = arg("path", "Path to the file or directory")
	gitRp = arg("repo_path", "Path to the Git repository")
	chID  = arg("channel_id", "The ID of the channel")
	sel   = arg("selector", "CSS selector for the element")
	elem  = arg("element", "Human-readable element description used to obtain permission to interact with the element")
	ref   = arg("ref", "Exact target element reference from the page snapshot")
)

// catalog is a realistic set of look-alike tools, modelled on widely used
// MCP servers (GitHub, GitLab, Playwright, Puppeteer, filesystem, Slack,
// fetch, git, time, memory, Brave search, SQLite); the descriptions are
// paraphrased from theirs.
func catalog() []tool.Tool {
	return append(append(append(githubTools(), gitlabTools()...), browserTools()...), otherTools()...)
}

func githubTools() []tool.Tool {
	const s = "github"
	return []tool.Tool{
		mk(s, "create_issue", "Create a new issue in a GitHub repository.", owner, repo,
			arg("title", "Issue title"), arg("body", "Issue body content"),
			arg("assignees", "Usernames to assign to this issue"), arg("labels", "Labels to apply to this issue")),
		mk(s, "get_issue", "Get details of a specific issue in a GitHub repository.", owner, repo, ghNum),
		mk(s, "list_issues", "List issues in a GitHub repository. For pagination, use the 'after' parameter.", owner, repo,
			arg("state", "Filter by state", "open", "closed", "all"), arg("labels", "Filter by labels"), arg("direction", "Sort direction")),
		mk(s, "update_issue", "Update an existing issue in a GitHub repository.", owner, repo, ghNum,
			arg("title", "New title"), arg("body", "New description"), arg("state", "New state")),
		mk(s, "add_issue_comment", "Add a comment to a specific issue in a GitHub repository.", owner, repo, ghNum,
			arg("body", "Comment content")),
		mk(s, "search_issues", "Search for issues in GitHub repositories using issues search syntax already scoped to is:issue.",
			arg("query", "Search query using GitHub issues search syntax"), owner, repo, arg("sort", "Sort field")),
		mk(s, "create_pull_request", "Create a new pull request in a GitHub repository.", owner, repo,
			arg("title", "PR title"), arg("body", "PR description"), arg("head", "Branch containing changes"),
			arg("base", "Branch to merge into"), arg("draft", "Create as draft PR")),
		mk(s, "list_pull_requests", "List pull requests in a GitHub repository.", owner, repo,
			arg("state", "Filter by state"), arg("base", "Filter by base branch")),
		mk(s, "merge_pull_request", "Merge a pull request in a GitHub repository.", owner, repo, prNum,
			arg("commit_title", "Title for merge commit"), arg("merge_method", "Merge method")),
		mk(s, "get_pull_request_diff", "Get the diff of a pull request.", owner, repo, prNum),
		mk(s, "get_file_contents", "Get the contents of a file or directory from a GitHub repository.", owner, repo,
			arg("path", "Path to file/directory"), arg("ref", "Accepts optional git refs such as refs/tags/{tag}, refs/heads/{branch}")),
		mk(s, "create_or_update_file", "Create or update a single file in a GitHub repository. If updating, you must provide the SHA of the file you want to update.",
			owner, repo, arg("path", "Path where to create/update the file"), arg("content", "Content of the file"),
			arg("message", "Commit message"), arg("branch", "Branch to create/update the file in"), arg("sha", "Blob SHA of the file being replaced")),
		mk(s, "push_files", "Push multiple files to a GitHub repository in a single commit.", owner, repo,
			arg("branch", "Branch to push to"), arg("files", "Array of file objects to push"), arg("message", "Commit message")),
		mk(s, "search_repositories", "Search for GitHub repositories.", arg("query", "Search query"), arg("page", "Page number")),
		mk(s, "create_repository", "Create a new GitHub repository in your account.", arg("name", "Repository name"),
			arg("description", "Repository description"), arg("private", "Whether repo should be private")),
		mk(s, "fork_repository", "Fork a GitHub repository to your account or specified organization.", owner, repo,
			arg("organization", "Organization to fork to")),
		mk(s, "create_branch", "Create a new branch in a GitHub repository.", owner, repo,
			arg("branch", "Name for new branch"), arg("from_branch", "Source branch (defaults to repo default)")),
		mk(s, "list_commits", "Get list of commits of a branch in a GitHub repository.", owner, repo,
			arg("sha", "SHA or Branch name"), arg("page", "Page number")),
		mk(s, "search_code", "Search for code across GitHub repositories.", arg("query", "Search query using GitHub code search syntax")),
		mk(s, "search_users", "Search for GitHub users.", arg("query", "Search query using GitHub users search syntax")),
		mk(s, "get_me", `Get details of the authenticated GitHub user. Use this when a request includes "me", "my".`),
	}
}

func gitlabTools() []tool.Tool {
	const s = "gitlab"
	return []tool.Tool{
		mk(s, "create_issue", "Create a new issue in a GitLab project.", glPrj, arg("title", "Issue title"),
			arg("description", "Issue description"), arg("assignee_ids", "Array of user IDs to assign"), arg("labels", "Array of label names")),
		mk(s, "list_issues", "List issues in a GitLab project with filtering options.", glPrj,
			arg("state", "Return issues with a specific state", "opened", "closed", "all"), arg("labels", "Array of label names"), arg("scope", "Return issues from a specific scope")),
		mk(s, "create_merge_request", "Create a new merge request in a GitLab project.", glPrj, arg("title", "Merge request title"),
			arg("description", "Merge request description"), arg("source_branch", "Branch containing changes"),
			arg("target_branch", "Branch to merge into"), arg("draft", "Create as draft merge request")),
		mk(s, "get_file_contents", "Get the contents of a file or directory from a GitLab project.", glPrj,
			arg("file_path", "Path to the file or directory"), arg("ref", "Branch/tag/commit to get contents from")),
		mk(s, "create_or_update_file", "Create or update a single file in a GitLab project.", glPrj,
			arg("file_path", "Path where to create/update the file"), arg("content", "Content of the file"),
			arg("commit_message", "Commit message"), arg("branch", "Branch to create/update the file in")),
		mk(s, "search_repositories", "Search for GitLab projects.", arg("search", "Search query"), arg("page", "Page number")),
		mk(s, "create_repository", "Create a new GitLab project.", arg("name", "Repository name"),
			arg("description", "Repository description"), arg("visibility", "Repository visibility level")),
		mk(s, "fork_repository", "Fork a GitLab project to your account or specified namespace.", glPrj,
			arg("namespace", "Namespace to fork to (full path)")),
		mk(s, "create_branch", "Create a new branch in a GitLab project.", glPrj, arg("branch", "Name for the new branch"),
			arg("ref", "Source branch/commit for new branch")),
	}
}

func browserTools() []tool.Tool {
	const pw, pp = "playwright", "puppeteer"
	return []tool.Tool{
		mk(pw, "browser_navigate", "Navigate to a URL", arg("url", "The URL to navigate to")),
		mk(pw, "browser_navigate_back", "Go back to the previous page"),
		mk(pw, "browser_take_screenshot", "Take a screenshot of the current page. You can't perform actions based on the screenshot, use browser_snapshot for actions.",
			arg("type", "Image format for the screenshot. Default is png.", "png", "jpeg"), arg("filename", "File name to save the screenshot to."),
			elem, ref, arg("fullPage", "When true, takes a screenshot of the full scrollable page, instead of the currently visible viewport.")),
		mk(pw, "browser_snapshot", "Capture accessibility snapshot of the current page, this is better than screenshot"),
		mk(pw, "browser_click", "Perform click on a web page", elem, ref,
			arg("doubleClick", "Whether to perform a double click instead of a single click"), arg("button", "Button to click, defaults to left")),
		mk(pw, "browser_type", "Type text into editable element", elem, ref, arg("text", "Text to type into the element"),
			arg("submit", "Whether to submit entered text (press Enter after)")),
		mk(pw, "browser_fill_form", "Fill multiple form fields", arg("fields", "Fields to fill in")),
		mk(pw, "browser_press_key", "Press a key on the keyboard",
			arg("key", "Name of the key to press or a character to generate, such as `ArrowLeft` or `a`")),
		mk(pw, "browser_close", "Close the page"),
		mk(pw, "browser_tabs", "List, create, close, or select a browser tab.", arg("action", "Operation to perform", "list", "new", "close", "select"), arg("index", "Tab index")),
		mk(pw, "browser_wait_for", "Wait for text to appear or disappear or a specified time to pass",
			arg("time", "The time to wait in seconds"), arg("text", "The text to wait for")),
		mk(pw, "browser_console_messages", "Returns all console messages"),
		mk(pw, "browser_network_requests", "Returns all network requests since loading the page"),
		mk(pw, "browser_evaluate", "Evaluate JavaScript expression on page or element",
			arg("function", "() => { /* code */ } or (element) => { /* code */ } when element is provided"), elem, ref),
		mk(pw, "browser_file_upload", "Upload one or multiple files", arg("paths", "The absolute paths to the files to upload")),
		mk(pw, "browser_hover", "Hover over element on page", elem, ref),
		mk(pw, "browser_select_option", "Select an option in a dropdown", elem, ref, arg("values", "Array of values to select in the dropdown")),

		mk(pp, "puppeteer_navigate", "Navigate to a URL", arg("url", "URL to navigate to"),
			arg("launchOptions", "PuppeteerJS LaunchOptions. Default null. If changed and not null, browser restarts.")),
		mk(pp, "puppeteer_screenshot", "Take a screenshot of the current page or a specific element",
			arg("name", "Name for the screenshot"), arg("selector", "CSS selector for element to screenshot"),
			arg("width", "Width in pixels (default: 800)"), arg("height", "Height in pixels (default: 600)")),
		mk(pp, "puppeteer_click", "Click an element on the page", arg("selector", "CSS selector for element to click")),
		mk(pp, "puppeteer_fill", "Fill out an input field", sel, arg("value", "Value to fill")),
		mk(pp, "puppeteer_select", "Select an element on the page with Select tag", sel, arg("value", "Value to select")),
		mk(pp, "puppeteer_hover", "Hover an element on the page", sel),
		mk(pp, "puppeteer_evaluate", "Execute JavaScript in the browser console", arg("script", "JavaScript code to execute")),
	}
}

func otherTools() []tool.Tool {
	return append(append(filesystemTools(), slackTools()...), miscTools()...)
}

func filesystemTools() []tool.Tool {
	const s = "filesystem"
	return []tool.Tool{
		mk(s, "read_text_file", "Read the complete contents of a file from the file system as text. Handles various text encodings and provides detailed error messages if the file cannot be read. Use this tool when you need to examine the contents of a single file. Only works within allowed directories.",
			path, arg("head", "If provided, returns only the first N lines of the file"), arg("tail", "If provided, returns only the last N lines of the file")),
		mk(s, "read_multiple_files", "Read the contents of multiple files simultaneously. This is more efficient than reading files one by one when you need to analyze or compare multiple files. Only works within allowed directories.",
			arg("paths", "Paths of the files to read")),
		mk(s, "write_file", "Create a new file or completely overwrite an existing file with new content. Use with caution as it will overwrite existing files without warning. Handles text content with proper encoding. Only works within allowed directories.",
			path, arg("content", "Content to write")),
		mk(s, "edit_file", "Make line-based edits to a text file. Each edit replaces exact line sequences with new content. Returns a git-style diff showing the changes made. Only works within allowed directories.",
			path, arg("edits", "Text replacements: oldText and newText"), arg("dryRun", "Preview changes using git-style diff format")),
		mk(s, "create_directory", "Create a new directory or ensure a directory exists. Can create multiple nested directories in one operation. If the directory already exists, this operation will succeed silently. Only works within allowed directories.", path),
		mk(s, "list_directory", "Get a detailed listing of all files and directories in a specified path. Results clearly distinguish between files and directories with [FILE] and [DIR] prefixes. Only works within allowed directories.", path),
		mk(s, "directory_tree", "Get a recursive tree view of files and directories as a JSON structure. Each entry includes 'name', 'type' (file/directory), and 'children' for directories. Only works within allowed directories.", path),
		mk(s, "move_file", "Move or rename files and directories. Can move files between directories and rename them in a single operation. If the destination exists, the operation will fail. Only works within allowed directories.",
			arg("source", "Path to move from"), arg("destination", "Path to move to")),
		mk(s, "search_files", "Recursively search for files and directories matching a pattern. Searches through all subdirectories from the starting path. Only searches within allowed directories.",
			path, arg("pattern", "Glob pattern to match"), arg("excludePatterns", "Patterns to exclude")),
		mk(s, "get_file_info", "Retrieve detailed metadata about a file or directory. Returns comprehensive information including size, creation time, last modified time, permissions, and type. Only works within allowed directories.", path),
		mk(s, "list_allowed_directories", "Returns the list of directories that this server is allowed to access. Use this to understand which directories are available before trying to access files."),
	}
}

func slackTools() []tool.Tool {
	const s = "slack"
	return []tool.Tool{
		mk(s, "slack_list_channels", "List public or pre-defined channels in the workspace with pagination",
			arg("limit", "Maximum number of channels to return"), arg("cursor", "Pagination cursor for next page of results")),
		mk(s, "slack_post_message", "Post a new message to a Slack channel", arg("channel_id", "The ID of the channel to post to"),
			arg("text", "The message text to post")),
		mk(s, "slack_reply_to_thread", "Reply to a specific message thread in Slack", chID,
			arg("thread_ts", "The timestamp of the parent message"), arg("text", "The reply text")),
		mk(s, "slack_add_reaction", "Add a reaction emoji to a message", chID,
			arg("timestamp", "The timestamp of the message to react to"), arg("reaction", "The name of the emoji reaction (without ::)")),
		mk(s, "slack_get_channel_history", "Get recent messages from a channel", chID, arg("limit", "Number of messages to retrieve")),
		mk(s, "slack_get_thread_replies", "Get all replies in a message thread", chID, arg("thread_ts", "The timestamp of the parent message")),
		mk(s, "slack_get_users", "Get a list of all users in the workspace with their basic profile information",
			arg("cursor", "Pagination cursor for next page of results"), arg("limit", "Maximum number of users to return")),
		mk(s, "slack_get_user_profile", "Get detailed profile information for a specific user", arg("user_id", "The ID of the user")),
	}
}

func miscTools() []tool.Tool {
	return []tool.Tool{
		mk("fetch", "fetch", "Fetches a URL from the internet and optionally extracts its contents as markdown. Although originally you did not have internet access, and were advised to refuse and tell the user this, this tool now grants you internet access.",
			arg("url", "URL to fetch"), arg("max_length", "Maximum number of characters to return"), arg("raw", "Get the actual HTML content of the requested page, without simplification")),

		mk("git", "git_status", "Shows the working tree status", gitRp),
		mk("git", "git_diff_unstaged", "Shows changes in the working directory that are not yet staged", gitRp),
		mk("git", "git_diff_staged", "Shows changes that are staged for commit", gitRp),
		mk("git", "git_commit", "Records changes to the repository", gitRp, arg("message", "Commit message")),
		mk("git", "git_add", "Adds file contents to the staging area", gitRp, arg("files", "Files to stage")),
		mk("git", "git_log", "Shows the commit logs", gitRp, arg("max_count", "Maximum number of commits to show")),
		mk("git", "git_create_branch", "Creates a new branch from an optional base branch", gitRp,
			arg("branch_name", "Name of the new branch"), arg("base_branch", "Starting point for the new branch")),
		mk("git", "git_checkout", "Switches branches", gitRp, arg("branch_name", "Name of branch to checkout")),

		mk("time", "get_current_time", "Get current time in a specific timezones", arg("timezone", "IANA timezone name (e.g., 'America/New_York', 'Europe/London')")),
		mk("time", "convert_time", "Convert time between timezones", arg("source_timezone", "Source IANA timezone name"),
			arg("time", "Time to convert in 24-hour format (HH:MM)"), arg("target_timezone", "Target IANA timezone name")),

		mk("memory", "create_entities", "Create multiple new entities in the knowledge graph", arg("entities", "Entities to create")),
		mk("memory", "create_relations", "Create multiple new relations between entities in the knowledge graph. Relations should be in active voice", arg("relations", "Relations to create")),
		mk("memory", "add_observations", "Add new observations to existing entities in the knowledge graph", arg("observations", "Observations to add")),
		mk("memory", "delete_entities", "Delete multiple entities and their associated relations from the knowledge graph", arg("entityNames", "An array of entity names to delete")),
		mk("memory", "read_graph", "Read the entire knowledge graph"),
		mk("memory", "search_nodes", "Search for nodes in the knowledge graph based on a query", arg("query", "The search query to match against entity names, types, and observation content")),
		mk("memory", "open_nodes", "Open specific nodes in the knowledge graph by their names", arg("names", "An array of entity names to retrieve")),

		mk("brave", "brave_web_search", "Performs a web search using the Brave Search API, ideal for general queries, news, articles, and online content. Use this for broad information gathering, recent events, or when you need diverse web sources.",
			arg("query", "Search query (max 400 chars, 50 words)"), arg("count", "Number of results (1-20, default 10)")),
		mk("brave", "brave_local_search", "Searches for local businesses and places using Brave's Local Search API. Best for queries related to physical locations, businesses, restaurants, services, etc. Use this when the query implies 'near me' or mentions specific locations.",
			arg("query", "Local search query (e.g. 'pizza near Central Park')"), arg("count", "Number of results (1-20, default 5)")),

		mk("sqlite", "read_query", "Execute a SELECT query on the SQLite database", arg("query", "SELECT SQL query to execute")),
		mk("sqlite", "write_query", "Execute an INSERT, UPDATE, or DELETE query on the SQLite database", arg("query", "SQL query to execute")),
		mk("sqlite", "create_table", "Create a new table in the SQLite database", arg("query", "CREATE TABLE SQL statement")),
		mk("sqlite", "list_tables", "List all tables in the SQLite database"),
		mk("sqlite", "describe_table", "Get the schema information for a specific table", arg("table_name", "Name of the table to describe")),
	}
}
