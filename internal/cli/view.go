package cli

import (
	"fmt"

	viewkind "github.com/mcpbridge/mcpbridge/internal/kinds/view"
	"github.com/mcpbridge/mcpbridge/tokens"
	"github.com/mcpbridge/mcpbridge/tool"
	"github.com/mcpbridge/mcpbridge/toolview"
)

// view returns the view of the config's tool-search entry, or nil when
// it has none.
func (b *bridge) view() *toolview.View {
	k, ok := b.cat.Kind(viewkind.Name)
	if !ok {
		return nil // untested: every catalog of the CLI has the kind
	}
	return k.(*viewkind.Kind).View()
}

// modelTools returns the tools a model sees: the tool-search view when
// the config has that entry, else the whole catalog.
func (b *bridge) modelTools() ([]tool.Tool, error) {
	if v := b.view(); v != nil {
		return v.Tools()
	}
	return b.reg.List(), nil
}

// viewNote says, for tools' summary line, how much of the catalog the
// view shows ("" when search is off).
func (b *bridge) viewNote(shown []tool.Tool) (string, error) {
	v := b.view()
	if v == nil {
		return "", nil
	}
	if on, err := v.On(); !on || err != nil {
		return "", err
	}
	all, err := v.CatalogTokens()
	if err != nil {
		return "", err
	}
	seen, err := tokens.Total(shown)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("; tool search on: the model sees %d tokens of the catalog's %d (%s)", seen, all, tokens.Encoding), nil
}
