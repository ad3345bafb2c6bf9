package toolsearch

import (
	"testing"
)

// requests are what users ask, in their own words (not the tools'), with
// the tool a model should be shown first. A hard request needs knowledge
// that no word of it shares with its tool (a README is a file; /etc/hosts
// is on this machine, not in a repository): it counts in the comparison
// with the baseline, but is not required to come first.
var requests = []struct {
	query, want string
	hard        bool
}{
	// GitHub and GitLab have the same verbs; the server decides.
	{"open a ticket in our GitLab project about the login bug", "mcp__gitlab__create_issue", false},
	{"file a bug on the GitHub repo", "mcp__github__create_issue", false},
	{"report a new issue on github: the app crashes when saving", "mcp__github__create_issue", false},
	{"which issues are still open in the gitlab project", "mcp__gitlab__list_issues", true}, // to "open" an issue is to create it
	{"open a PR on GitHub to merge my feature branch into main", "mcp__github__create_pull_request", false},
	{"open a merge request in gitlab from feature to main", "mcp__gitlab__create_merge_request", false},
	{"merge PR #42", "mcp__github__merge_pull_request", false},
	{"leave a comment on issue 17 saying it is fixed", "mcp__github__add_issue_comment", false},
	{"show me the README of the repo on github", "mcp__github__get_file_contents", true},
	{"fork this project on gitlab", "mcp__gitlab__fork_repository", false},
	{"search GitHub for repositories about vector databases", "mcp__github__search_repositories", false},
	{"find code that calls os.Exit across github", "mcp__github__search_code", false},
	{"create a new branch called release on github", "mcp__github__create_branch", false},
	{"which github account am I logged in as", "mcp__github__get_me", false},

	// Playwright and Puppeteer do the same things.
	{"take a screenshot of the page with puppeteer", "mcp__puppeteer__puppeteer_screenshot", false},
	{"grab an image of the current page in playwright", "mcp__playwright__browser_take_screenshot", false},
	{"go to https://example.com in puppeteer", "mcp__puppeteer__puppeteer_navigate", false},
	{"playwright: open the url https://news.ycombinator.com", "mcp__playwright__browser_navigate", false},
	{"click the submit button using playwright", "mcp__playwright__browser_click", false},
	{"type my email address into the login field with puppeteer", "mcp__puppeteer__puppeteer_fill", false},
	{"run some javascript in the puppeteer browser", "mcp__puppeteer__puppeteer_evaluate", false},
	{"go back to the previous page", "mcp__playwright__browser_navigate_back", false},

	// Files.
	{"show the contents of /etc/hosts", "mcp__filesystem__read_text_file", true},
	{"save this text to notes.txt", "mcp__filesystem__write_file", false},
	{"what files are in my home folder", "mcp__filesystem__list_directory", false},
	{"make a new folder called build", "mcp__filesystem__create_directory", false},
	{"rename report.txt to report-old.txt", "mcp__filesystem__move_file", false},
	{"how big is this file and when was it last changed", "mcp__filesystem__get_file_info", false},
	{"find all the .go files under src", "mcp__filesystem__search_files", false},
	{"show the folder structure of the project as a tree", "mcp__filesystem__directory_tree", false},

	// Chat.
	{"send a message to the #general slack channel", "mcp__slack__slack_post_message", false},
	{"what were the latest messages in the slack channel", "mcp__slack__slack_get_channel_history", false},
	{"react with a thumbs up emoji to that slack message", "mcp__slack__slack_add_reaction", false},
	{"who is in our slack workspace", "mcp__slack__slack_get_users", false},

	// The web, time, git, databases, memory.
	{"download the web page at this url and give me markdown", "mcp__fetch__fetch", false},
	{"search the web for the latest Go release notes", "mcp__brave__brave_web_search", false},
	{"find a good pizza place near me", "mcp__brave__brave_local_search", false},
	{"what time is it in Tokyo right now", "mcp__time__get_current_time", false},
	{"convert 3pm New York time to Berlin", "mcp__time__convert_time", false},
	{"commit my staged changes with the message 'fix typo'", "mcp__git__git_commit", true}, // "staged" is git_diff_staged's word
	{"what have I changed in the working tree that isn't staged yet", "mcp__git__git_diff_unstaged", false},
	{"switch to the develop branch", "mcp__git__git_checkout", false},
	{"show the recent commit log of the local repository", "mcp__git__git_log", false},
	{"run a SQL select against the sqlite database", "mcp__sqlite__read_query", false},
	{"what tables exist in the sqlite db", "mcp__sqlite__list_tables", false},
	{"look up what the knowledge graph knows about Alice", "mcp__memory__search_nodes", false},
	{"remove the entity Bob from memory", "mcp__memory__delete_entities", false},
}

// rank is the 1-based position of want in ms, 0 when absent.
func rank(ms []Match, want string) int {
	for i, m := range ms {
		if m.Name == want {
			return i + 1
		}
	}
	return 0
}

// The ranker puts the tool a user means first, for requests worded the
// way users word them.
func TestSearchRealisticRequests(t *testing.T) {
	idx := New(catalog())
	for _, r := range requests {
		got := idx.Search(r.query, 5)
		if len(got) > 0 && got[0].Name == r.want {
			continue
		}
		if r.hard {
			t.Logf("hard request %q: %s is at rank %d", r.query, r.want, rank(idx.Search(r.query, 0), r.want))
		} else {
			t.Errorf("Search(%q): want %s first, got %s (rank %d)", r.query, r.want, names(got), rank(idx.Search(r.query, 0), r.want))
		}
	}
}

// BM25F with aliases finds more first-choice tools than plain BM25 on the
// same requests (recall@1).
func TestSearchBeatsBaseline(t *testing.T) {
	tools := catalog()
	ranker, baseline := New(tools), NewBaseline(tools)
	var hits, baseHits int
	for _, r := range requests {
		got, base := ranker.Search(r.query, 1), baseline.Search(r.query, 1)
		if len(got) > 0 && got[0].Name == r.want {
			hits++
		}
		if len(base) > 0 && base[0].Name == r.want {
			baseHits++
		}
		t.Logf("%-70q ranker %d  baseline %d", r.query, rank(ranker.Search(r.query, 0), r.want), rank(baseline.Search(r.query, 0), r.want))
	}
	n := float64(len(requests))
	t.Logf("recall@1: ranker %.2f, baseline %.2f (%d requests)", float64(hits)/n, float64(baseHits)/n, len(requests))
	if hits <= baseHits {
		t.Errorf("recall@1: ranker %d of %d, baseline %d: the ranker does not beat the baseline", hits, len(requests), baseHits)
	}
}

func names(ms []Match) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Name
	}
	return out
}

// heldOut are requests written after the ranker was tuned on requests and
// never tuned on: an estimate of how it does on words it has not seen.
var heldOut = []struct {
	query, want string
}{
	{"list my open pull requests on github", "mcp__github__list_pull_requests"},
	{"close issue 12 on github", "mcp__github__update_issue"},
	{"create a private repository on github called dotfiles", "mcp__github__create_repository"},
	{"show the diff of pull request 88", "mcp__github__get_pull_request_diff"},
	{"hover over the menu with playwright", "mcp__playwright__browser_hover"},
	{"press Enter in the browser", "mcp__playwright__browser_press_key"},
	{"upload resume.pdf to the form", "mcp__playwright__browser_file_upload"},
	{"pick 'Germany' from the country dropdown in puppeteer", "mcp__puppeteer__puppeteer_select"},
	{"open these three files at once", "mcp__filesystem__read_multiple_files"},
	{"change line 3 of config.yaml", "mcp__filesystem__edit_file"},
	{"which directories can you access", "mcp__filesystem__list_allowed_directories"},
	{"reply in the thread under that slack message", "mcp__slack__slack_reply_to_thread"},
	{"get Bob's slack profile", "mcp__slack__slack_get_user_profile"},
	{"list all slack channels", "mcp__slack__slack_list_channels"},
	{"stage main.go for the next commit", "mcp__git__git_add"},
	{"what's the status of my git working copy", "mcp__git__git_status"},
	{"link Alice to Acme with a works_at relation in the knowledge graph", "mcp__memory__create_relations"},
	{"show the whole knowledge graph", "mcp__memory__read_graph"},
	{"describe the columns of the users table", "mcp__sqlite__describe_table"},
	{"insert a row into the orders table in sqlite", "mcp__sqlite__write_query"},
	{"what's on the page right now, as an accessibility tree", "mcp__playwright__browser_snapshot"},
	{"print the browser's console log", "mcp__playwright__browser_console_messages"},
	{"wait until the text 'Done' appears", "mcp__playwright__browser_wait_for"},
}

// On the held-out requests the ranker does at least as well as the
// baseline; the numbers are logged for the record.
func TestSearchHeldOut(t *testing.T) {
	tools := catalog()
	ranker, baseline := New(tools), NewBaseline(tools)
	var hits, baseHits int
	for _, r := range heldOut {
		rr, br := rank(ranker.Search(r.query, 0), r.want), rank(baseline.Search(r.query, 0), r.want)
		if rr == 1 {
			hits++
		}
		if br == 1 {
			baseHits++
		}
		t.Logf("%-70q ranker %d  baseline %d", r.query, rr, br)
	}
	n := float64(len(heldOut))
	t.Logf("held-out recall@1: ranker %.2f, baseline %.2f (%d requests)", float64(hits)/n, float64(baseHits)/n, len(heldOut))
	if hits < baseHits {
		t.Errorf("held-out recall@1: ranker %d of %d, baseline %d", hits, len(heldOut), baseHits)
	}
}
