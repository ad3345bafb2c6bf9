package naming

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// goldenRow is one line of testdata/golden-names.tsv.
type goldenRow struct {
	line       int
	serverName string
	rawName    string
	public     string
}

// readGolden parses testdata/golden-names.tsv: '#' lines are comments, the
// columns are tab-separated and the raw name is a JSON string so that any
// character can be written down.
func readGolden(tb testing.TB) []goldenRow {
	tb.Helper()
	f, err := os.Open("../../testdata/golden-names.tsv")
	if err != nil {
		tb.Fatalf("opening golden names: %v", err)
	}
	defer f.Close()
	var rows []goldenRow
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != 3 {
			tb.Fatalf("golden-names.tsv:%d: want 3 tab-separated columns, got %d", n, len(cols))
		}
		var raw string
		if err := json.Unmarshal([]byte(cols[1]), &raw); err != nil {
			tb.Fatalf("golden-names.tsv:%d: raw name %s is not a JSON string: %v", n, cols[1], err)
		}
		rows = append(rows, goldenRow{line: n, serverName: cols[0], rawName: raw, public: cols[2]})
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("reading golden names: %v", err)
	}
	if len(rows) < 20 {
		tb.Fatalf("golden-names.tsv holds %d rows, want at least 20", len(rows))
	}
	return rows
}

func TestGoldenFile(t *testing.T) {
	for _, r := range readGolden(t) {
		if got := Public(r.serverName, r.rawName); got != r.public {
			t.Errorf("golden-names.tsv:%d: Public(%q, %q) = %q, want %q", r.line, r.serverName, r.rawName, got, r.public)
		}
	}
}

// TestGoldenVectors is docs/upstream.md §2.4 G1–G17 and the extras, with the full
// SHA-256 so that the hash input (serverName NUL rawName) is pinned too.
func TestGoldenVectors(t *testing.T) {
	tests := []struct {
		id, server, raw, want string
		sha                   string
		hashed                bool
	}{
		{"G1", "github", "create_issue", "mcp__github__create_issue", "5b9912e694bb311f19e7ae135eeb21a45e827b0383d5541da680988adfe65495", false},
		{"G2", "everything", "get-sum", "mcp__everything__get-sum", "9dd64e7f5e6cfbf7f49a91e17b0ee9a011ae2c9f72497a993f95b1554ec234b3", false},
		{"G3", "fs", "read.file", "mcp__fs__read_file_a70c27002fc8", "a70c27002fc8cfaedcb322827fc8edc5695b4ea0b91fdc9ad582d2f280fa6269", true},
		{"G4", "srv", "admin.reset", "mcp__srv__admin_reset_3b185f786768", "3b185f786768179b8357a987c265a9842e6a0cb35d357124a0055960ee9accb6", true},
		{"G5", "srv", "admin_reset", "mcp__srv__admin_reset", "7d7f97c8ea39694458166175dcc529976b4a2f4921bc4f7bdac430e7d56453ac", false},
		{"G6", "fixture", "admin.reset", "mcp__fixture__admin_reset_2d9bb2dfe9aa", "2d9bb2dfe9aa6f7c4b8d9ceddc85e0ce738803c0f05111c2337e3776a8f34bf6", true},
		{"G7", "srv", strings.Repeat("a", 80), "mcp__srv__aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa_3b75b5cc78d8", "3b75b5cc78d8d7ed01ba7b7f311b19408dc38008e636e4a046ca579d4b98a6c3", true},
		{"G8", "fs", strings.Repeat("x", 100), "mcp__fs__xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_fd203530bbdb", "fd203530bbdb4a08ef03d98b9efde7554369118f5053ac9820e482b450081354", true},
		{"G9", "srv", strings.Repeat("b", 54), "mcp__srv__" + strings.Repeat("b", 54), "43e9e0f5a8a6cf7be7d5a73208b14018f6c94b671e844650ad903623afc05f30", false},
		{"G10", "srv", strings.Repeat("b", 55), "mcp__srv__bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb_332aa951f626", "332aa951f6268cca53731490d38ec65e71884090b9a80da6f37a6647aa606039", true},
		{"G11", "notes", "café", "mcp__notes__caf__c55c6e60eff5", "c55c6e60eff53c74375309a964e39fdbe62086e93e40ac03a6d81ea7410d093c", true},
		{"G12", "kb", "搜索", "mcp__kb_____f5a2b4f042c9", "f5a2b4f042c90e9bc6537b767045a173896afbd8944d7106c29d55481bc1ecca", true},
		{"G13", "emoji", "rocket\U0001F680", "mcp__emoji__rocket___a139f928edb7", "a139f928edb7d5c7a439bd8c4f0c589a6fef853abb79e8d9f1e30dc1abc75cb4", true},
		{"G14", "web", "search/v2 beta", "mcp__web__search_v2_beta_92043f2f1571", "92043f2f1571c0fea1f3ab18e00af20547cdf6a9eccc39f999421c2fd739ad14", true},
		{"G15", "srv", "", "mcp__srv__", "70750adcc16f8cb9164bd4fd94a0c3d849b97359d9951cd9047ad226364325e3", false},
		{"G16", strings.Repeat("A", 32), "tool", "mcp__" + strings.Repeat("A", 32) + "__tool", "7bd3460abc9159a20f4f8efc0b419248543ec6df8bc930f1ce221a78610b8a17", false},
		{"G17", strings.Repeat("A", 32), strings.Repeat("t", 30), "mcp__AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA__tttttttttttt_76b997ed58dc", "76b997ed58dc177c6eb1cb71509e0114449587b3e819e13841acafcd6cc7a3ec", true},
		{"extra-emoji", "x", "a\U0001F600b", "mcp__x__a__b_8c6ccf64a18a", "", true},
		{"extra-e-acute", "x", "aéb", "mcp__x__a_b_808d1ded2571", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			got := Public(tt.server, tt.raw)
			if got != tt.want {
				t.Errorf("Public(%q, %q) = %q, want %q", tt.server, tt.raw, got, tt.want)
			}
			if !Valid(got) {
				t.Errorf("Valid(%q) = false, want true", got)
			}
			if h := Hashed(tt.server, tt.raw); h != tt.hashed {
				t.Errorf("Hashed(%q, %q) = %v, want %v", tt.server, tt.raw, h, tt.hashed)
			}
			if tt.sha != "" {
				sum := identityHash(tt.server, tt.raw)
				if got := hex.EncodeToString(sum[:]); got != tt.sha {
					t.Errorf("sha256(%q NUL %q) = %s, want %s", tt.server, tt.raw, got, tt.sha)
				}
			}
		})
	}
}

// TestUpstreamNameCases is upstream tests 21–24 (docs/upstream.md §8.2).
func TestUpstreamNameCases(t *testing.T) {
	hashedName := regexp.MustCompile(`^mcp__srv__admin_reset_[0-9a-f]{12}$`)
	if got := Public("srv", "admin.reset"); !hashedName.MatchString(got) || len(got) > MaxLen {
		t.Errorf("test 22: Public(srv, admin.reset) = %q, want %s and at most %d long", got, hashedName, MaxLen)
	}
	long := Public("srv", strings.Repeat("a", 80))
	if len(long) != MaxLen || !strings.HasPrefix(long, "mcp__srv__aaa") || !regexp.MustCompile(`_[0-9a-f]{12}$`).MatchString(long) {
		t.Errorf("test 23: Public(srv, 80×a) = %q, want 64 long, prefix mcp__srv__aaa, hash suffix", long)
	}
	if a, b := Public("srv", "admin.reset"), Public("srv", "admin.reset"); a != b {
		t.Errorf("test 24: Public is not deterministic: %q then %q", a, b)
	}
	if a, b := Public("srv", "admin.reset"), Public("srv", "admin_reset"); a == b {
		t.Errorf("test 24: admin.reset and admin_reset both map to %q", a)
	}
}

// TestCollisions pins C1–C3 (docs/upstream.md §2.4): the algorithm is a contract, so
// its known collisions are too; callers detect them (docs/decisions.md §2), Public
// does not hide them.
func TestCollisions(t *testing.T) {
	tests := []struct {
		id               string
		server1, raw1    string
		server2, raw2    string
		want             string
		hashed1, hashed2 bool
	}{
		{"C1", "srv", "admin.reset", "srv", "admin_reset_3b185f786768", "mcp__srv__admin_reset_3b185f786768", true, false},
		{"C2", "a", "b__c", "a__b", "c", "mcp__a__b__c", false, false},
		{"C3", "a_", "_b", "a", "__b", "mcp__a____b", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			got := []any{Public(tt.server1, tt.raw1), Public(tt.server2, tt.raw2), Hashed(tt.server1, tt.raw1), Hashed(tt.server2, tt.raw2)}
			want := []any{tt.want, tt.want, tt.hashed1, tt.hashed2}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(name1, name2, hashed1, hashed2) mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPublicEdges covers what the golden vectors do not: truncation inside a
// surrogate pair, invalid UTF-8, a non-ASCII server name and the boundary
// where the normalized prefix is shorter than 51 characters.
func TestPublicEdges(t *testing.T) {
	tests := []struct {
		name, server, raw, want string
	}{
		// joined "mcp__s__" (8) + 42 'a' = 50 chars, then an emoji: only one of
		// its two '_' fits in the 51 kept characters.
		{"emoji split at the cut", "s", strings.Repeat("a", 42) + "\U0001F680" + "z", "mcp__s__" + strings.Repeat("a", 42) + "_" + "_" + refHash("s", strings.Repeat("a", 42)+"\U0001F680"+"z")},
		{"invalid UTF-8 byte is one _", "s", "a\xffb", "mcp__s__a_b_" + refHash("s", "a\xffb")},
		{"encoded U+FFFD is one _", "s", "a\uFFFDb", "mcp__s__a_b_" + refHash("s", "a\uFFFDb")},
		{"non-ASCII server name", "sé", "t", "mcp__s___t_" + refHash("sé", "t")},
		{"NUL in raw name", "s", "a\x00b", "mcp__s__a_b_" + refHash("s", "a\x00b")},
		{"hash input longer than the stack buffer", "s", strings.Repeat("y", 300), "mcp__s__" + strings.Repeat("y", 43) + "_" + refHash("s", strings.Repeat("y", 300))},
		{"empty everything", "", "", "mcp____"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Public(tt.server, tt.raw); got != tt.want {
				t.Errorf("Public(%q, %q) = %q, want %q", tt.server, tt.raw, got, tt.want)
			}
		})
	}
}

func TestValid(t *testing.T) {
	tests := []struct {
		s    string
		want bool
	}{
		{"", false},
		{"a", true},
		{"mcp__srv__", true},
		{"A-z_0-9", true},
		{strings.Repeat("x", MaxLen), true},
		{strings.Repeat("x", MaxLen+1), false},
		{"a.b", false},
		{"a b", false},
		{"café", false},
		{"a\x00", false},
		{"a/b", false},
		{"a:b", false},
	}
	for _, tt := range tests {
		if got := Valid(tt.s); got != tt.want {
			t.Errorf("Valid(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}

// refHash is the 12-hex suffix computed the obvious way, independently of
// identityHash's buffer handling.
func refHash(server, raw string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + raw))
	return hex.EncodeToString(sum[:])[:12]
}

// refPublic is a straightforward transcription of docs/upstream.md §2.2 that works on
// real UTF-16 code units, used as the oracle for the fuzzer. Converting to
// []rune turns each invalid UTF-8 byte into one U+FFFD, i.e. one code unit,
// which is the documented choice.
func refPublic(server, raw string) (name string, hashed bool) {
	joined := "mcp__" + server + "__" + raw
	units := utf16.Encode([]rune(joined))
	var norm strings.Builder
	for _, u := range units {
		if u < 128 && allowedRef(byte(u)) {
			norm.WriteByte(byte(u))
		} else {
			norm.WriteByte('_')
		}
	}
	n := norm.String()
	if n == joined && len(n) <= 64 {
		return joined, false
	}
	return n[:min(len(n), 51)] + "_" + refHash(server, raw), true
}

func allowedRef(c byte) bool {
	return strings.IndexByte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-", c) >= 0
}

func FuzzPublic(f *testing.F) {
	for _, r := range readGolden(f) {
		f.Add(r.serverName, r.rawName)
	}
	f.Add("s", strings.Repeat("a", 42)+"\U0001F680")
	f.Add("s", "a\xffb")
	f.Add("", "")
	validName := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	f.Fuzz(func(t *testing.T, server, raw string) {
		got := Public(server, raw)
		if !validName.MatchString(got) || !Valid(got) {
			t.Fatalf("Public(%q, %q) = %q, not a valid function name", server, raw, got)
		}
		if again := Public(server, raw); again != got {
			t.Fatalf("Public(%q, %q) not deterministic: %q then %q", server, raw, got, again)
		}
		want, wantHashed := refPublic(server, raw)
		if got != want {
			t.Fatalf("Public(%q, %q) = %q, reference says %q", server, raw, got, want)
		}
		if h := Hashed(server, raw); h != wantHashed {
			t.Fatalf("Hashed(%q, %q) = %v, reference says %v", server, raw, h, wantHashed)
		}
		suffix := "_" + refHash(server, raw)
		if wantHashed != strings.HasSuffix(got, suffix) {
			t.Fatalf("Public(%q, %q) = %q: hash suffix %q present = %v, want %v", server, raw, got, suffix, strings.HasSuffix(got, suffix), wantHashed)
		}
		if !wantHashed && got != "mcp__"+server+"__"+raw {
			t.Fatalf("Public(%q, %q) = %q, want the joined name verbatim", server, raw, got)
		}
	})
}

func BenchmarkPublic(b *testing.B) {
	cases := []struct{ name, server, raw string }{
		{"clean", "github", "create_issue"},
		{"dotted", "srv", "admin.reset"},
		{"long", "srv", strings.Repeat("a", 80)},
		{"emoji", "emoji", "rocket\U0001F680"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = Public(c.server, c.raw)
			}
		})
	}
}

// BenchmarkPublic10000 is the re-sync workload: ten thousand tools, mostly
// clean, some lossy.
func BenchmarkPublic10000(b *testing.B) {
	raws := make([]string, 10000)
	for i := range raws {
		raws[i] = "tool_" + strings.Repeat("x", i%40) + string(rune('a'+i%26))
		if i%10 == 0 {
			raws[i] += ".v2"
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range raws {
			_ = Public("server", r)
		}
	}
}
