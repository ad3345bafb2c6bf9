package attach

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

var wav = []byte("RIFF\x24\x00\x00\x00WAVEfmt ")

// mediaServer is a real go-sdk server whose tools return images and audio.
func mediaServer() *mcp.Server {
	srv := mcppeer.Fixture(mcppeer.FixtureOptions{})
	tiny, _ := base64.StdEncoding.DecodeString(mcppeer.TinyPNG)
	add := func(name string, content ...mcp.Content) {
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: content}, nil
			})
	}
	add("media", &mcp.TextContent{Text: "before"}, &mcp.ImageContent{MIMEType: "image/png", Data: tiny},
		&mcp.TextContent{Text: "between"}, &mcp.AudioContent{MIMEType: "audio/wav", Data: wav}, &mcp.TextContent{Text: "after"})
	add("badimage", &mcp.ImageContent{MIMEType: "image/bmp", Data: []byte{1}})
	return srv
}

// call calls a tool of the media server through a real bridge.
func call(t *testing.T, name string) tool.Result {
	hs := mcptest.NewHTTPServer(t, mediaServer(), mcptest.HTTPOptions{})
	reg := tool.NewRegistry()
	srv, err := mcpclient.Start(mcpclient.Config{ServerName: "m", Transport: mcpclient.TransportStreamableHTTP, URL: hs.URL}, mcpclient.Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	res, _ := reg.Execute(ctx, "mcp__m__"+name, []byte(`{}`))
	return res
}

func TestTextSavesImagesAndAudio(t *testing.T) {
	dir := Dir(filepath.Join(t.TempDir(), "saved"))
	res := call(t, "media")
	got := Text(context.Background(), dir, res)
	re := regexp.MustCompile(`^before\n\[image saved: (\S+\.png) \(image/png, 69 B\)\]\nbetween\n\[audio saved: (\S+\.wav) \(audio/wav, 16 B\)\]\nafter$`)
	m := re.FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("text:\n%s", got)
	}
	f, err := os.Open(m[1])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil || img.Bounds().Dx() != 1 {
		t.Errorf("saved PNG: %v %v", img, err)
	}
	if data, _ := os.ReadFile(m[2]); !bytes.Equal(data, wav) {
		t.Errorf("saved audio: %q", data)
	}
	if st, _ := os.Stat(string(dir)); st.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v", st.Mode())
	}
	// The same bytes again: the same file, nothing more in the directory.
	if again := Text(context.Background(), dir, res); again != got {
		t.Errorf("second save:\n%s", again)
	}
	if entries, _ := os.ReadDir(string(dir)); len(entries) != 2 {
		t.Errorf("directory: %v", entries)
	}
	// The value is untouched: base64 and all.
	if !strings.Contains(string(res.Value), mcppeer.TinyPNG) {
		t.Errorf("value changed: %s", res.Value)
	}
}

// failing is a Store that refuses everything.
type failing struct{}

func (failing) Put(context.Context, Attachment) (string, error) { return "", errors.New("disk full") }

func TestTextKeepsWhatCannotBeSaved(t *testing.T) {
	res := call(t, "media")
	if got := Text(context.Background(), failing{}, res); !strings.Contains(got, "[image not saved: image/png; disk full]") ||
		!strings.Contains(got, "[audio not saved: audio/wav; disk full]") {
		t.Errorf("text: %s", got)
	}
	bad := call(t, "badimage")
	if got, want := Text(context.Background(), failing{}, bad), bad.Text(); got != want || !strings.Contains(got, "not PNG, JPEG") {
		t.Errorf("a refused image: %q, want %q", got, want)
	}
	failed := tool.Result{IsError: true, Content: []tool.Content{{Type: "text", Text: "Error: x"}}}
	if got := Text(context.Background(), failing{}, failed); got != "Error: x" {
		t.Errorf("failed result: %q", got)
	}
	// A directory that cannot be made is reported in place.
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	if got := Text(context.Background(), Dir(filepath.Join(file, "sub")), res); !strings.Contains(got, "[image not saved: image/png; mkdir ") {
		t.Errorf("unwritable dir: %s", got)
	}
}

func TestSizeAndExtension(t *testing.T) {
	for n, want := range map[int]string{0: "0 B", 1023: "1023 B", 1229: "1.2 KB", 3565158: "3.4 MB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
	// a type that is neither an image's nor a sound's is no file to open
	// (a server's "audio" of type text/html was saved as a .htm page)
	for mt, want := range map[string]string{"image/png": ".png", "IMAGE/JPEG": ".jpg", "audio/mpeg; rate=44100": ".mp3", "application/x-nothing-known": ".bin",
		"text/html": ".bin", "application/javascript": ".bin"} {
		if got := extension(mt); got != want {
			t.Errorf("extension(%q) = %q, want %q", mt, got, want)
		}
	}
	t.Setenv("XDG_CACHE_HOME", "/cache")
	if d, err := DefaultDir(); err != nil || d != "/cache/mcpbridge" {
		t.Errorf("DefaultDir = %q, %v", d, err)
	}
}

// A Dir keeps at most MaxKept attachments, the newest, and leaves what
// else the cache directory holds (the registry's answers) alone: a
// screenshot tool called in a loop used to fill the disk.
func TestDirKeepsAtMostMaxKept(t *testing.T) {
	d := Dir(t.TempDir())
	other := filepath.Join(string(d), "registry")
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(string(d), "notes.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var first, last string
	for i := range MaxKept + 10 {
		p, err := d.Put(context.Background(), Attachment{MediaType: "image/png", Data: []byte(strconv.Itoa(i))})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = p
		}
		last = p
		// The newest is told by its time; a coarse clock must not tie them.
		old := time.Now().Add(time.Duration(i-MaxKept-10) * time.Second)
		os.Chtimes(p, old, old)
	}
	entries, _ := os.ReadDir(string(d))
	if n := len(entries); n != MaxKept+2 {
		t.Errorf("%d entries, want %d attachments and the two others", n, MaxKept)
	}
	if _, err := os.Stat(first); err == nil {
		t.Error("the oldest attachment is still there")
	}
	for _, p := range []string{last, other, filepath.Join(string(d), "notes.txt")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s is gone: %v", p, err)
		}
	}
}
