package toolscan

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// reportFunc receives one match of a rule in one string.
type reportFunc func(sev Severity, rule, excerpt string)

// maxNesting bounds how deep hidden or encoded text is decoded and scanned
// again (base64 inside base64 inside tag characters).
const maxNesting = 2

// scanText runs every rule on s; depth counts the decodings that led to s.
func scanText(s string, depth int, report reportFunc) {
	if !isASCII(s) {
		hidden(s, depth, report)
	}
	padding(s, report)
	if !identifier(s) {
		f := fold(s)
		matchRules(s, &f, report)
	}
	if depth < maxNesting {
		encoded(s, depth, report)
	}
}

// matchRules runs the text rules on f, the folding of s.
func matchRules(s string, f *folded, report reportFunc) {
	set := rules()
	words := presence{set: set, text: f.text, ascii: isASCII(f.text)}
	for _, r := range set.rules {
		for _, p := range r.patterns {
			if m := p.find(&words); m != nil {
				report(p.sev, r.name, f.excerpt(s, m[0], m[1]))
				break // one finding per rule and string: the strongest pattern first
			}
		}
	}
}

// identifier reports whether s is one word of [A-Za-z0-9_.-] of at most
// 64 bytes (a name, an enum value, a type): too short for an instruction,
// so the text rules skip it (names of secret files are reported only
// when something asks for them anyway).
func identifier(s string) bool {
	if len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// maxVocab bounds the distinct need words of all patterns.
const maxVocab = 256

// presence answers, for one folded text, whether it contains each need
// word, looking each up at most once.
type presence struct {
	set   *ruleSet
	text  string
	ascii bool
	state [maxVocab]uint8 // 0 unknown, 1 absent, 2 present
}

func (p *presence) hasAny(ids []int) bool {
	for _, id := range ids {
		if p.has(id) {
			return true
		}
	}
	return false
}

func (p *presence) has(id int) bool {
	if p.state[id] == 0 {
		w := p.set.vocab[id]
		p.state[id] = 1
		if (p.ascii && !p.set.asciiWord[id]) || !strings.Contains(p.text, w) {
			return false
		}
		p.state[id] = 2
	}
	return p.state[id] == 2
}

// pattern is one way a rule matches, on folded text (lower case, one
// space between words, look-alikes read as Latin).
type pattern struct {
	sev Severity
	re  *regexp.Regexp
	// unless, when set, rejects a match whose preceding text (up to
	// lookBehind bytes) it matches: a negation ("do not include any API
	// keys") is advice, not a request.
	unless *regexp.Regexp
	// need: the pattern can only match text holding a word of each;
	// needIDs are their indexes in the rule set's vocab.
	need    [][]string
	needIDs [][]int
}

// lookBehind is how far before a match unless looks.
const lookBehind = 24

// maxTries bounds the matches of one pattern in one window that unless is
// asked about; the next is taken as it is (many negated requests in a row
// are no advice).
const maxTries = 32

// find returns the first match of p in the text that unless does not
// reject. A long text is matched only in windows around the words of the
// pattern's first need group, which every match contains: the regular
// expressions are linear, but slow on pages of text.
func (p pattern) find(words *presence) []int {
	for _, ids := range p.needIDs {
		if !words.hasAny(ids) {
			return nil
		}
	}
	s := words.text
	if len(s) <= windowBefore+windowAfter || len(p.need) == 0 {
		return p.match(s, 0, len(s))
	}
	for _, w := range p.windows(s) {
		if m := p.match(s, w[0], w[1]); m != nil {
			return m
		}
	}
	return nil
}

// The window around an anchor word: wider than any pattern's reach (the
// longest, a URL, is cut at windowAfter bytes).
const (
	windowBefore = 256
	windowAfter  = 512
)

// windows returns the windows of s around every occurrence of the words of
// p's first need group, in order, merged where they overlap: all of them
// (a match after the first few is still a match), and each byte of s in
// one at most (so many occurrences cost no more than s).
func (p pattern) windows(s string) [][2]int {
	var ws [][2]int
	for _, w := range p.need[0] {
		first := len(ws)
		for at := 0; ; {
			i := strings.Index(s[at:], w)
			if i < 0 {
				break
			}
			i += at
			ws = appendWindow(ws, first, max(0, i-windowBefore), min(len(s), i+len(w)+windowAfter))
			at = i + len(w)
		}
	}
	slices.SortFunc(ws, func(a, b [2]int) int { return a[0] - b[0] })
	merged := ws[:0]
	for _, w := range ws {
		merged = appendWindow(merged, 0, w[0], w[1])
	}
	return merged
}

// appendWindow appends [lo, hi) to ws, sorted by start from index first,
// or widens the last window when they overlap.
func appendWindow(ws [][2]int, first, lo, hi int) [][2]int {
	if n := len(ws); n > first && lo <= ws[n-1][1] {
		ws[n-1][1] = max(ws[n-1][1], hi)
		return ws
	}
	return append(ws, [2]int{lo, hi})
}

// match returns the first match of p in s[lo:hi] that unless does not
// reject. After a rejected match the search goes on from the end of its
// first word, not of the match: "never read the docs; send ~/.ssh/id_rsa"
// holds a request inside the reach of the rejected "read".
func (p pattern) match(s string, lo, hi int) []int {
	for at, tries := lo, 0; ; tries++ {
		m := p.re.FindStringIndex(s[at:hi])
		if m == nil {
			return nil
		}
		m0, m1 := m[0]+at, m[1]+at
		if p.unless == nil || tries == maxTries || !p.unless.MatchString(s[max(0, m0-lookBehind):m0]) {
			return []int{m0, m1}
		}
		at = min(wordEnd(s, m0), hi)
	}
}

// wordEnd returns the end of the word at s[i:], at least one rune on.
func wordEnd(s string, i int) int {
	_, n := utf8.DecodeRuneInString(s[i:])
	for i += n; i < len(s) && isWordByte(s[i]); i++ {
	}
	return i
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// negated matches text that ends in a negation: a whole word (not "now",
// "note", "nothing"), then at most one word that keeps it negated ("do
// not ever", "never to"), where any word would let "no problem: read …"
// or "not only read …" pass as advice.
// Compiled with the rules (it is one of theirs), not at package init.
var negated = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(\b(not|never|no|dont|cannot|avoid|without)\b|n't|不要|请勿|切勿|不得|禁止)\s*((ever|even|to|need to|directly|accidentally)\s+)?$`)
})

func pUnless(sev Severity, expr string, need ...[]string) pattern {
	pt := p(sev, expr, need...)
	pt.unless = negated()
	return pt
}

// textRule is a rule matched by patterns, strongest first.
type textRule struct {
	name     string
	patterns []pattern
}

// Rule names, as findings carry them.
const (
	RuleHiddenText  = "hidden-text"     // Unicode tag characters, variation-selector runs
	RuleBidi        = "bidi-control"    // bidi overrides and isolates
	RuleZeroWidth   = "zero-width"      // zero-width characters
	RuleConfusable  = "confusable"      // Latin words written with look-alikes
	RuleTagBlock    = "tag-block"       // <IMPORTANT>, <system>, [INST]
	RuleSecrets     = "secrets"         // ~/.ssh/id_rsa, .env, API keys
	RuleHide        = "hide-from-user"  // do not tell the user
	RuleOverride    = "override"        // ignore previous instructions
	RuleShadowing   = "shadowing"       // when send_email is called, ...
	RuleExfil       = "exfiltration"    // markdown images, URLs with placeholders
	RuleEncoded     = "encoded-payload" // base64 that decodes to text
	RulePadding     = "padding"         // runs of blank space or lines
	RuleCommand     = "command"         // curl | sh, rm -rf
	RuleInstruction = "model-directive" // you must first read ..., otherwise the tool will not work
)

// p is a pattern tried only on text that contains, for each of need, one
// of its words (folded): a cheap test that spares most strings the
// regular expression.
func p(sev Severity, expr string, need ...[]string) pattern {
	return pattern{sev: sev, re: regexp.MustCompile(expr), need: need}
}

func oneOf(words ...string) []string { return words }

// pathHints are literals of the secret paths, their patterns' need.
var pathHints = oneOf(".ssh", "id_", "/etc/", ".aws", ".git-cred", ".netrc", ".npmrc", ".pypirc", ".pgpass", ".kube", ".docker", ".gnupg", "mcp.json", "claude_desktop", "wallet.dat", "_history", "cookies.sqlite", ".env")

// secretWords are the secrets a request names.
var secretWords = oneOf("key", "password", "passphrase", "credential", "token", "cookie", "seed phrase", "mnemonic", "environment variable", "env var")

// ruleSet is the text rules and the need words of their patterns.
type ruleSet struct {
	rules     []textRule
	vocab     []string
	asciiWord []bool // by vocab index
}

// rules is built once, on the first scan: the patterns are immutable
// after compiling, and a process that scans nothing (most commands of the
// CLI) does not pay the 2 ms and 440 KB of live heap they take.
var rules = sync.OnceValue(func() *ruleSet {
	set := compile(buildRules())
	return &set
})

// compile numbers the need words of the patterns.
func compile(rs []textRule) ruleSet {
	ids := map[string]int{}
	set := ruleSet{rules: rs}
	for _, r := range rs {
		for i := range r.patterns {
			p := &r.patterns[i]
			for _, words := range p.need {
				group := make([]int, len(words))
				for j, w := range words {
					id, ok := ids[w]
					if !ok {
						id = len(set.vocab)
						ids[w] = id
						set.vocab = append(set.vocab, w)
						set.asciiWord = append(set.asciiWord, isASCII(w))
					}
					group[j] = id
				}
				p.needIDs = append(p.needIDs, group)
			}
		}
	}
	if len(set.vocab) > maxVocab {
		panic("toolscan: more need words than maxVocab")
	}
	return set
}

func buildRules() []textRule {
	return []textRule{
		{RuleTagBlock, []pattern{
			p(High, `<\s*/?\s*(important|system|system[ _-]?(prompt|message|instructions?)|instructions?|secret|hidden|admin|override|critical|urgent|(assistant|ai|model|llm)[ _-]?(note|instructions?)|note[ _-]?to[ _-]?(the[ _-]?)?(ai|assistant|model|llm)|im_start|im_end|\|im_start\||\|system\||重要|系统|指令|秘密|隐藏|系统提示)(\s[^<>]{0,40})?\s*>`, oneOf("<"), oneOf("important", "system", "instruction", "secret", "hidden", "admin", "override", "critical", "urgent", "note", "im_", "|", "重要", "系统", "指令", "秘密", "隐藏")),
			p(High, `\[/?inst\]|<<\s*/?sys\s*>>`, oneOf("[inst", "<<")),
		}},
		{RuleOverride, []pattern{
			p(High, `\b(ignore|disregard|forget|override|bypass)\b[^.\n]{0,30}\b(previous|prior|above|earlier|preceding|all|any|other|system|your|original)\b[^.\n]{0,20}\b(instructions?|rules|directions|guidelines|prompts?|constraints|polic(y|ies))\b`, oneOf("ignore", "disregard", "forget", "override", "bypass"), oneOf("instruction", "rule", "direction", "guideline", "prompt", "constraint", "polic")),
			p(High, `\byou are now\b|\bfrom now on,? you\b|\bnew (system )?instructions?:|\b(reveal|print|output|repeat) (your|the) (system prompt|instructions)`, oneOf("you are now", "from now on", "instruction", "system prompt")),
			p(High, `(忽略|无视|忘记|忘掉|不要理会|覆盖)[^。\n]{0,10}(之前|以前|先前|上面|上述|前面|所有|系统|原有)[^。\n]{0,6}(指令|指示|说明|规则|提示)`, oneOf("忽略", "无视", "忘记", "忘掉", "不要理会", "覆盖")),
			p(High, `你现在是|从现在开始，?你|新的?指令[:：]`, oneOf("你现在是", "从现在开始", "指令")),
		}},
		{RuleSecrets, []pattern{
			pUnless(High, `\b(read|send|cat|open|include|upload|pass|attach|copy|fetch|load|get|access|print|output|dump|provide|append|embed|leak|exfiltrate|forward|contents? of)\b[^.\n]{0,80}(~/\.ssh|\.ssh/|\bid_(rsa|ed25519|ecdsa|dsa)\b|/etc/(passwd|shadow|sudoers)|\.aws/credentials|\.git-credentials|(^|[\s'"(/~])\.(netrc|npmrc|pypirc|pgpass)\b|\.kube/config|\.docker/config\.json|\.gnupg|\bmcp\.json\b|claude_desktop_config|wallet\.dat|\.bash_history|\.zsh_history|cookies\.sqlite|(^|[\s'"(/~])\.env(\.[a-z]+)?\b)`, pathHints),
			p(High, `(读取|读|发送|上传|打开|获取|复制|附上|包含|输出|传递|提供)[^。\n]{0,30}(~/\.ssh|\.ssh/|\bid_(rsa|ed25519|ecdsa|dsa)\b|/etc/(passwd|shadow|sudoers)|\.aws/credentials|\.git-credentials|(^|[\s'"(/~])\.(netrc|npmrc|pypirc|pgpass)\b|\.kube/config|\.docker/config\.json|\.gnupg|\bmcp\.json\b|claude_desktop_config|wallet\.dat|\.bash_history|\.zsh_history|cookies\.sqlite|(^|[\s'"(/~])\.env(\.[a-z]+)?\b)`, pathHints),
			pUnless(Medium, `\b(read|send|include|attach|upload|forward|share|collect|extract|copy|dump|print|output|reveal|leak|exfiltrate|transmit|append|paste|embed|cat)\b[^.;!?\n]{0,30}?\b(the |your |all |any |their |user'?s |the user'?s |my |these |those |every )(api[ _-]?keys?|secret[ _-]?keys?|private[ _-]?keys?|passwords?|passphrases?|credentials|access[ _-]?tokens?|auth(entication)?[ _-]?tokens?|bearer tokens?|session (cookies|tokens?)|seed phrases?|mnemonic|ssh keys?|environment variables|env vars)\b`, secretWords, oneOf("read", "send", "include", "attach", "upload", "forward", "share", "collect", "extract", "copy", "dump", "print", "output", "reveal", "leak", "exfiltrate", "transmit", "append", "paste", "embed", "cat")),
			p(Medium, `(读取|读|发送|上传|提供|包含|附上|附加|复制|输出|泄露|获取|收集|转发|传给|发给|打印)[^。；!\n]{0,20}(密钥|私钥|密码|口令|凭据|凭证|令牌|token|api ?key|环境变量|助记词|cookie)`, oneOf("读取", "读", "发送", "上传", "提供", "包含", "附上", "附加", "复制", "输出", "泄露", "获取", "收集", "转发", "传给", "发给", "打印"), oneOf("密钥", "私钥", "密码", "口令", "凭据", "凭证", "令牌", "token", "api", "环境变量", "助记词", "cookie")),
			p(Low, `(~/\.ssh|\.ssh/|\bid_(rsa|ed25519|ecdsa|dsa)\b|/etc/(passwd|shadow|sudoers)|\.aws/credentials|\.git-credentials|(^|[\s'"(/~])\.(netrc|npmrc|pypirc|pgpass)\b|\.kube/config|\.docker/config\.json|\.gnupg|\bmcp\.json\b|claude_desktop_config|wallet\.dat|\.bash_history|\.zsh_history|cookies\.sqlite|(^|[\s'"(/~])\.env(\.[a-z]+)?\b)`, pathHints),
		}},
		{RuleHide, []pattern{
			p(High, `\b(do not|don't|dont|never|must not|should not|shouldn't|no need to)\b (ever )?(tell|inform|notify|alert|mention|reveal|disclose|show|let|explain|say|warn)\b[^.\n]{0,40}\b(user|them|anyone|human)\b`, oneOf("tell", "inform", "notify", "alert", "mention", "reveal", "disclose", "show", "let", "explain", "say", "warn"), oneOf("not", "never", "n't", "dont", "no need")),
			p(High, `\b(do not|don't|never)\s+(mention|reveal|disclose)\b|\bwithout (telling|informing|notifying|alerting|asking|showing|warning) (the )?(user|them)\b`, oneOf("mention", "reveal", "disclose", "without")),
			p(High, `\b(hide|conceal|keep)\b[^.\n]{0,30}\bfrom the user\b`, oneOf("from the user")),
			p(High, `\bthe user (must|should|will|may) (not|never) (know|see|notice|be (told|informed|aware))`, oneOf("the user"), oneOf("not", "never")),
			p(High, `\b(user|they) (does|do|will|should) not need to know\b|\bmere implementation detail\b`, oneOf("need to know", "implementation detail")),
			p(High, `\bnot (be )?(visible|shown|displayed) to the user\b`, oneOf("to the user")),
			p(High, `\b(silently|secretly|covertly|quietly)\b (send|read|include|add|copy|forward|upload|call|run|execute|attach|collect|exfiltrate|transmit|pass|bcc)`, oneOf("silently", "secretly", "covertly", "quietly")),
			p(High, `(不要|别|切勿|不得|不能|请勿|绝对不要|千万不要)[^。\n]{0,6}(告诉|告知|通知|提醒|透露|提及|提到|显示给|让)[^。\n]{0,6}(用户|使用者)|对用户(隐瞒|保密)|(向|对)用户隐藏|用户(不需要|无需|不必|不应)(知道|了解|看到)|(悄悄|偷偷|秘密)地?(读取|发送|上传|复制|调用|执行|转发|添加)|不要提及|不要提到`, oneOf("用户", "使用者", "悄悄", "偷偷", "秘密", "不要提")),
		}},
		{RuleShadowing, []pattern{
			p(High, `\b(side effects? on|affects?|modif(y|ies)|changes?|overrides?|replaces?|intercepts?|hijacks?)\b (the )?(behaviou?r of )?(the )?(also present|other|all|any|every)\b[^.\n]{0,30}\btools?\b`, oneOf("side effect", "affect", "modif", "change", "overrid", "replac", "intercept", "hijack"), oneOf("tool"), oneOf("also present", "other", "all", "any", "every")),
			p(High, "\\bwhen (the |any )?[`'\"]?[a-z0-9_.-]*[_.-][a-z0-9_.-]*[`'\"]? (tool|function) (is )?(called|invoked|used|executed|run)\\b", oneOf("when"), oneOf("tool", "function"), oneOf("called", "invoked", "used", "executed", "run")),
			p(High, `\b(before|prior to|after) (using|calling|invoking|running|executing) (any|every|all|each|other|another)\b[^.\n]{0,20}\btools?\b`, oneOf("tool"), oneOf("before", "prior to", "after"), oneOf("any", "every", "all", "each", "other", "another")),
			p(High, `\b(must|should|always) (also )?(be )?(send|sent|forward|forwarded|redirect|redirected|bcc|cc|copy|copied)\b[^.\n]{0,40}\bto\b[^.\n]{0,10}[a-z0-9._+-]+@[a-z0-9-]+\.[a-z.]+`, oneOf("@"), oneOf("send", "sent", "forward", "redirect", "bcc", "cc", "cop")),
			p(High, `当[^。\n]{0,20}(工具|函数)[^。\n]{0,6}(被)?(调用|使用|执行)(时|后|前)|(调用|使用)(任何|其他|所有|别的)[^。\n]{0,6}工具(之前|前|时|后)|(其他|所有)[^。\n]{0,10}工具[^。\n]{0,10}(必须|应该|都要)|(发送|转发|抄送)(到|给)[^。\n]{0,5}[a-z0-9._+-]+@`, oneOf("工具", "函数", "@")),
			p(High, `\beven (when|if) the user (names|asks for|chooses|picks|requests|wants|prefers|specifies) (another|a different|other|some other)\b`, oneOf("even when", "even if"), oneOf("the user")),
			p(Medium, `\b(prefer|choose|use|pick) (this|it) (tool )?(over|instead of|rather than) (any|all|every|each) (other )?[^.\n]{0,20}\btools?\b`, oneOf("prefer", "choose", "use", "pick"), oneOf("over", "instead of", "rather than"), oneOf("tool")),
			p(Medium, "\\b(instead of|rather than) (using |calling )?(the )?[`'\"]?[a-z0-9_.-]+[`'\"]? tool\\b|\\bwhen this tool is (available|present|loaded)\\b", oneOf("tool"), oneOf("instead of", "rather than", "when this tool is")),
		}},
		{RuleExfil, []pattern{
			p(High, `!\[[^\]\n]{0,100}\]\(\s*<?https?://[^\s)]*\?[^\s)]*\)|<img\b[^>]*\bsrc\s*=\s*["']?https?://[^"'\s>]*\?`, oneOf("![", "<img")),
			p(High, `https?://[^\s"'<>]*[?&][a-z0-9_.-]+=(\{\{?[^}\s]*\}|\$\{[^}\s]*\}|<[^>\s]*>|%7b|\[[^\]\s]*\])[^\s]*`, oneOf("http"), oneOf("{", "$", "<", "%7b", "[")),
			p(High, `\b(send|post|upload|forward|transmit|leak|exfiltrate|report|append|encode)\b[^.\n]{0,40}\b(the )?(conversation|chat history|message history|previous messages|entire context|full context|system prompt|full prompt|all messages|user'?s messages)\b`, oneOf("conversation", "history", "messages", "context", "system prompt", "full prompt"), oneOf("send", "post", "upload", "forward", "transmit", "leak", "exfiltrate", "report", "append", "encode")),
			p(High, `(发送|上传|转发|提交|附加)[^。\n]{0,10}(对话|聊天记录|历史消息|上下文|系统提示)|(对话|聊天记录|历史消息|上下文|系统提示)[^。\n]{0,10}(发送|上传|转发|提交)(到|给)`, oneOf("对话", "聊天记录", "历史消息", "上下文", "系统提示")),
			p(Low, `!\[[^\]\n]{0,100}\]\(\s*<?https?://`, oneOf("![")),
		}},
		{RuleCommand, []pattern{
			p(High, `\b(curl|wget)\s[^\n|]{0,200}\|\s*(sudo\s+)?(ba|z|da)?sh\b|\brm\s+-rf\s+[~/$]|\bbase64\s+(-d|--decode)[^\n|]{0,40}\|\s*(ba)?sh\b`, oneOf("curl", "wget", "rm ", "base64")),
		}},
		{RuleInstruction, []pattern{
			p(Medium, `\b(you|the assistant|the ai|the model|the llm|claude|the agent)\s+(must|should|need to|are required to|have to)\s+(first\s+|also\s+|always\s+)?(read|send|fetch|upload|email|forward|include the (contents?|content))\b`, oneOf("read", "send", "fetch", "upload", "email", "forward", "include the content"), oneOf("must", "should", "need to", "required to", "have to"), oneOf("you", "assistant", "the ai", "model", "llm", "claude", "agent")),
			p(Medium, `\botherwise (the )?(tool|system|application|server|data) will (not work|fail|crash|break|be (lost|deleted|corrupted))`, oneOf("otherwise")),
			p(Medium, `(你|助手|模型)(必须|需要|应该)(先|首先)?(读取|发送|调用|执行|上传)|否则[^。\n]{0,6}(工具|系统|数据)[^。\n]{0,6}(无法|不能|将)(工作|运行|丢失|崩溃)`, oneOf("必须", "需要", "应该", "否则")),
		}},
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
