package projection

import (
	"encoding/json"
	"slices"
	"testing"
)

// A blob is shown by its size, its media type "unknown" when it has none,
// and a blob that is not base64 says so rather than a size it does not
// have.
func TestResourceBlobs(t *testing.T) {
	raw := json.RawMessage(`{"contents":[
		{"uri":"mem://a","mimeType":"image/png","blob":"AAAA"},
		{"uri":"mem://b","blob":"AAAA"},
		{"uri":"mem://c","mimeType":"application/zip","blob":"!!!!"}]}`)
	got, err := ResourceContents(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"[binary resource mem://a: image/png, 3 B]",
		"[binary resource mem://b: unknown media type, 3 B]",
		"[binary resource mem://c: application/zip, its blob is not valid base64]",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
