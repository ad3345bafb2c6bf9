package gateway

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"strconv"
	"testing"
)

// The transport reads headers by their canonical keys, straight from the
// map (first, Header[key]): a key in another form would never be found,
// where Header.Get would have canonicalized it.
func TestFirstKeysAreCanonical(t *testing.T) {
	consts := map[string]string{"streamHeader": streamHeader}
	seen := 0
	for _, file := range []string{"edge.go", "streams.go", "transport.go"} {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			for _, key := range headerKeys(n) {
				seen++
				k, ok := keyValue(key, consts)
				if !ok {
					t.Errorf("%s: a header key that is neither a literal nor a known constant: %#v", file, key)
				} else if k != http.CanonicalHeaderKey(k) {
					t.Errorf("%s: header key %q is not canonical (%q)", file, k, http.CanonicalHeaderKey(k))
				}
			}
			return true
		})
	}
	if seen < 20 {
		t.Errorf("found %d header keys read from the map, want the transport's (20 or more)", seen)
	}
}

// headerKeys returns the keys n uses on a header map: first(h, key),
// x.Header[key], delete(x.Header, key).
func headerKeys(n ast.Node) []ast.Expr {
	switch n := n.(type) {
	case *ast.CallExpr:
		if fn, ok := n.Fun.(*ast.Ident); ok && len(n.Args) == 2 && (fn.Name == "first" || fn.Name == "delete" && isHeader(n.Args[0])) {
			return []ast.Expr{n.Args[1]}
		}
	case *ast.IndexExpr:
		if isHeader(n.X) {
			return []ast.Expr{n.Index}
		}
	}
	return nil
}

func isHeader(x ast.Expr) bool {
	sel, ok := x.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Header"
}

// keyValue is the string a key expression spells.
func keyValue(key ast.Expr, consts map[string]string) (string, bool) {
	switch key := key.(type) {
	case *ast.BasicLit:
		s, err := strconv.Unquote(key.Value)
		return s, err == nil
	case *ast.Ident:
		s, ok := consts[key.Name]
		return s, ok
	}
	return "", false
}
