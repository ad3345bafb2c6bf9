package configsource

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpbridge/mcpbridge/confpos"
	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/importconf"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
)

// Parse validates the config file read from path with the catalog's kinds:
// mcpbridge YAML, or another client's config converted to it (with its
// errors at the positions of the file as written).
//
// An entry whose config is invalid fails alone (host.Catalog.ParseIsolated):
// it stays in the plan with its problems, and the others run.
func (r Reader) Parse(path string, data []byte) (*host.Plan, error) {
	data, conv, err := r.foreign(path, data)
	if err != nil {
		return nil, err
	}
	return r.parse(path, data, conv)
}

// Import converts another client's config read from path and parses the
// result as Parse does: the conversion (importconf.ErrNotForeign for
// mcpbridge YAML) and the plan, whose invalid entries are the problems of
// the converted config, told in the source's terms.
func (r Reader) Import(path string, data []byte) (*importconf.Result, *host.Plan, error) {
	yaml, conv, err := r.foreign(path, data)
	switch {
	case err != nil:
		return nil, nil, err
	case conv == nil:
		return nil, nil, importconf.ErrNotForeign
	}
	plan, err := r.parse(path, yaml, conv)
	return conv, plan, err
}

// parse parses data, the YAML of path or of its conversion conv (nil for
// mcpbridge YAML).
func (r Reader) parse(path string, data []byte, conv *importconf.Result) (*host.Plan, error) {
	plan, err := r.Catalog.ParseIsolated(path, data, r.Lookup)
	if err != nil {
		return nil, relocate(conv, err)
	}
	for i := range plan.Entries {
		pe := &plan.Entries[i]
		if pe.Err != nil {
			pe.Err = relocate(conv, pe.Err)
		}
		if err := mistakes(path, conv, pe.Entry.ID); err != nil {
			pe.Err, pe.Spec = err, host.Spec{Name: pe.Spec.Name}
		}
		if conv != nil { // where list and get say the entry comes from
			if p, ok := conv.Position(pe.Entry.Line, pe.Entry.Column); ok {
				pe.Entry.Line, pe.Entry.Column = p.Line, p.Column
			}
		}
	}
	return plan, nil
}

// InvalidErrors returns the problems of plan's invalid entries, in file
// order, or nil when every entry is valid.
func InvalidErrors(plan *host.Plan) error {
	var errs confpos.Errors
	for _, pe := range plan.Invalid() {
		var ces confpos.Errors
		if errors.As(pe.Err, &ces) {
			errs = append(errs, ces...)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	slices.SortStableFunc(errs, func(a, b *confpos.Error) int {
		return cmp.Or(strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	return errs
}

// foreign turns the config of another client (importconf) read from path
// into mcpbridge YAML, printing on Notes each field it could not map; for
// mcpbridge's own YAML it returns data and a nil conversion.
func (r Reader) foreign(path string, data []byte) ([]byte, *importconf.Result, error) {
	res, err := importconf.Convert(path, data)
	if errors.Is(err, importconf.ErrNotForeign) {
		return data, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	for _, n := range res.Notes {
		if !n.Mistake && r.Notes != nil { // a mistake is the entry's problem (mistakes)
			fmt.Fprintf(r.Notes, "mcpbridge: %s\n", termsafe.Line(n.Format(path)))
		}
	}
	return res.YAML, res, nil
}

// mistakes are the problems of the entry id that its conversion found
// (importconf.Note.Mistake, like a misspelt "comand"), in place of those
// the entry would have without the misspelt field; nil when none.
func mistakes(path string, conv *importconf.Result, id string) error {
	if conv == nil {
		return nil
	}
	var errs confpos.Errors
	for _, n := range conv.Notes {
		if n.Mistake && n.Entry == id {
			errs = append(errs, &confpos.Error{File: path, Line: n.Line, Column: n.Column, EntryID: id, Path: n.Path, Msg: n.Msg})
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// relocate points the config errors found in a converted file at the
// source file's lines and columns (or, where a field was made up by the
// conversion, at its server), named by their path there
// (mcpServers.web.url, not config.url), and the lines their messages name
// too: the file the user edits.
func relocate(res *importconf.Result, err error) error {
	var ces confpos.Errors
	if res == nil || !errors.As(err, &ces) {
		return err
	}
	out := make(confpos.Errors, len(ces))
	for i, ce := range ces {
		c := *ce
		c.Msg = res.SourceLines(ce.Msg)
		if path, ok := res.SourcePath(ce.Line, ce.Column); ok {
			c.Path = path
		}
		if p, ok := res.Position(ce.Line, ce.Column); ok {
			c.Line, c.Column = p.Line, p.Column
		} else {
			c.Line, c.Column = 0, 0 // untested: every node written has a source position
		}
		out[i] = &c
	}
	return out
}
