package sdkwire

import (
	"bytes"
	"encoding/base64"
	"encoding/gob"
	"fmt"
)

// PageCursor is the nextCursor the SDK's server gives a list page whose
// last item has the unique id uid (a tool's or prompt's name, a
// resource's URI, a template's URI template): the next page starts past
// uid (assumption 42). It names uid to whoever decodes it.
func PageCursor(uid string) string {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(pageToken{LastUID: uid}); err != nil {
		panic(fmt.Sprintf("sdkwire: encoding a page cursor: %v", err)) // a struct of one string
	}
	return base64.URLEncoding.EncodeToString(buf.Bytes())
}

// pageToken is the SDK's cursor, named as the SDK names it: gob writes
// the type's name.
type pageToken struct {
	LastUID string
}
