package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// reply returns a body that answers with the given text.
func reply(text string) tool.Func {
	return func(context.Context, json.RawMessage) (tool.Output, error) {
		return tool.Output{Content: []tool.Content{tool.Text(text)}}, nil
	}
}

// def is a valid definition named name whose body answers with its name.
func def(name string) tool.Tool {
	return tool.Tool{Name: name, Description: "tool " + name, Execute: reply(name)}
}

// defs returns valid definitions for names.
func defs(names ...string) []tool.Tool { return each(def, names...) }

// listNames returns the names r.List reports, in its order.
func listNames(r *tool.Registry) []string {
	var out []string
	for _, t := range r.List() {
		out = append(out, t.Name)
	}
	return out
}

// mustRegister registers tools or fails the test.
func mustRegister(t *testing.T, r *tool.Registry, tools ...tool.Tool) *tool.Handle {
	t.Helper()
	h, err := r.Register(tools...)
	if err != nil {
		t.Fatalf("Register: %v", err)
	}
	return h
}

// pending reports whether ch holds a value, consuming it.
func pending(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestRegister(t *testing.T) {
	badJSON := json.RawMessage(`{"type":`)
	tests := []struct {
		name      string
		existing  []tool.Tool // registered first, by a "foreign" producer
		register  []tool.Tool
		wantErr   string // empty: success
		conflict  bool   // error wraps ErrConflict
		wantNames []string
	}{
		{name: "one", register: defs("a"), wantNames: []string{"a"}},
		{name: "several", register: defs("b", "a", "c"), wantNames: []string{"a", "b", "c"}},
		{name: "zero tools", existing: defs("x"), wantNames: []string{"x"}},
		{name: "beside foreign", existing: defs("x"), register: defs("y"), wantNames: []string{"x", "y"}},
		{
			name:      "empty name",
			register:  []tool.Tool{def("a"), {Execute: reply("")}},
			wantErr:   "tool at index 1: name is empty",
			wantNames: nil,
		},
		{
			name:     "nil Execute",
			register: []tool.Tool{{Name: "a"}},
			wantErr:  `tool "a": Execute is nil`,
		},
		{
			name:     "invalid input schema",
			register: []tool.Tool{{Name: "a", Execute: reply(""), InputSchema: badJSON}},
			wantErr:  `tool "a": InputSchema is not valid JSON: unexpected end of JSON input`,
		},
		{
			name:     "invalid output schema",
			register: []tool.Tool{{Name: "a", Execute: reply(""), OutputSchema: json.RawMessage(`nope`)}},
			wantErr:  `tool "a": OutputSchema is not valid JSON: invalid character 'o' in literal null (expecting 'u')`,
		},
		{
			name:     "twice in one call",
			register: defs("a", "b", "a"),
			wantErr:  `tool "a" is already registered`,
			conflict: true,
		},
		{
			name:      "foreign squatter",
			existing:  defs("x", "mcp__s__read"),
			register:  defs("mcp__s__write", "mcp__s__read"),
			wantErr:   `tool "mcp__s__read" is already registered`,
			conflict:  true,
			wantNames: []string{"mcp__s__read", "x"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tool.NewRegistry()
			mustRegister(t, r, tt.existing...)
			before := r.Version()
			h, err := r.Register(tt.register...)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Register: %v", err)
				}
				if diff := cmp.Diff(namesOf(tt.register), h.Names()); diff != "" {
					t.Errorf("Names() mismatch (-want +got):\n%s", diff)
				}
			} else {
				if err == nil {
					t.Fatalf("Register succeeded, want error %q", tt.wantErr)
				}
				if err.Error() != tt.wantErr {
					t.Errorf("error = %q, want %q", err.Error(), tt.wantErr)
				}
				if got := errors.Is(err, tool.ErrConflict); got != tt.conflict {
					t.Errorf("errors.Is(err, ErrConflict) = %v, want %v", got, tt.conflict)
				}
				if h != nil {
					t.Errorf("handle = %v on error, want nil", h)
				}
			}
			if diff := cmp.Diff(tt.wantNames, listNames(r)); diff != "" {
				t.Errorf("registered names mismatch (-want +got):\n%s", diff)
			}
			wantVersion := before
			if err == nil && len(tt.register) > 0 {
				wantVersion++
			}
			if got := r.Version(); got != wantVersion {
				t.Errorf("Version() = %d, want %d", got, wantVersion)
			}
			// The foreign tools are untouched: same definition, same body.
			for _, ft := range tt.existing {
				got, ok := r.Get(ft.Name)
				if !ok || got.Description != ft.Description {
					t.Errorf("Get(%q) = %+v, %v; want the foreign definition", ft.Name, got, ok)
				}
				res, err := r.Execute(context.Background(), ft.Name, nil)
				if err != nil || res.Text() != ft.Name {
					t.Errorf("Execute(%q) = %q, %v; want the foreign body's %q", ft.Name, res.Text(), err, ft.Name)
				}
			}
		})
	}
}

func namesOf(tools []tool.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}

func TestConflictErrorCarriesName(t *testing.T) {
	r := tool.NewRegistry()
	mustRegister(t, r, def("taken"))
	_, err := r.Register(def("free"), def("taken"))
	var ce *tool.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v is not a *ConflictError", err)
	}
	if ce.Name != "taken" {
		t.Errorf("ConflictError.Name = %q, want %q", ce.Name, "taken")
	}
	if got, want := fmt.Errorf("register: %w", err).Error(), `register: tool "taken" is already registered`; got != want {
		t.Errorf("wrapped text = %q, want %q", got, want)
	}
}

func TestGetKeepsDefinitionUntouched(t *testing.T) {
	r := tool.NewRegistry()
	in := json.RawMessage("{ \"type\" : \"object\",\n  \"properties\": {} }")
	out := json.RawMessage(`{"type":"string"}`)
	mustRegister(t, r, tool.Tool{Name: "a", Description: "d", InputSchema: in, OutputSchema: out, Execute: reply("")})
	got, ok := r.Get("a")
	if !ok {
		t.Fatal("Get(a) not found")
	}
	if string(got.InputSchema) != string(in) || string(got.OutputSchema) != string(out) || got.Description != "d" {
		t.Errorf("Get(a) = %+v, want the schemas byte for byte", got)
	}
	if _, ok := r.Get("b"); ok {
		t.Error("Get(b) found a tool that was never registered")
	}
}

func TestUnregister(t *testing.T) {
	r := tool.NewRegistry()
	mustRegister(t, r, def("keep"))
	h := mustRegister(t, r, defs("b", "a")...)
	v := r.Version()

	h.Unregister()
	if diff := cmp.Diff([]string{"keep"}, listNames(r)); diff != "" {
		t.Errorf("after Unregister (-want +got):\n%s", diff)
	}
	if got := r.Version(); got != v+1 {
		t.Errorf("Version() after Unregister = %d, want %d", got, v+1)
	}
	h.Unregister() // idempotent: no change, no version bump
	if got := r.Version(); got != v+1 {
		t.Errorf("Version() after second Unregister = %d, want %d", got, v+1)
	}
	if diff := cmp.Diff([]string{"b", "a"}, h.Names()); diff != "" {
		t.Errorf("Names() after Unregister (-want +got):\n%s", diff)
	}
	// The name is free again for anyone.
	mustRegister(t, r, def("a"))

	empty := mustRegister(t, r)
	v = r.Version()
	empty.Unregister()
	var nilHandle *tool.Handle
	nilHandle.Unregister()
	(&tool.Handle{}).Unregister()
	if got := r.Version(); got != v {
		t.Errorf("Version() after no-op Unregisters = %d, want %d", got, v)
	}
	if nilHandle.Names() != nil {
		t.Errorf("nil handle Names() = %v, want nil", nilHandle.Names())
	}
	if diff := cmp.Diff([]string{"a", "keep"}, listNames(r)); diff != "" {
		t.Errorf("final names (-want +got):\n%s", diff)
	}
}

func TestNamesIsACopy(t *testing.T) {
	r := tool.NewRegistry()
	h := mustRegister(t, r, defs("a", "b")...)
	h.Names()[0] = "z"
	h.Unregister()
	if r.Len() != 0 {
		t.Errorf("Len() = %d after Unregister of a handle whose Names() was modified, want 0", r.Len())
	}
}

func TestUnregisterConcurrent(t *testing.T) {
	r := tool.NewRegistry()
	h := mustRegister(t, r, defs("a", "b")...)
	v := r.Version()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(h.Unregister)
	}
	wg.Wait()
	if r.Len() != 0 || r.Version() != v+1 {
		t.Errorf("after concurrent Unregister: Len %d, Version %d; want 0, %d", r.Len(), r.Version(), v+1)
	}
}

func TestReplace(t *testing.T) {
	tests := []struct {
		name      string
		foreign   []string // registered by someone else
		old       []string // registered, then (maybe) unregistered, then replaced
		oldGone   bool     // old unregistered before Replace
		oldNil    bool     // Replace(nil, …)
		replace   []tool.Tool
		wantErr   string
		conflict  bool
		wantNames []string
		bump      bool // one version bump expected
	}{
		{name: "nil old", oldNil: true, replace: defs("a"), wantNames: []string{"a"}, bump: true},
		{name: "nil old, no tools", oldNil: true, foreign: []string{"f"}, wantNames: []string{"f"}},
		{name: "disjoint", old: []string{"a", "b"}, replace: defs("c"), wantNames: []string{"c"}, bump: true},
		{name: "same names", old: []string{"a", "b"}, replace: defs("b", "a"), wantNames: []string{"a", "b"}, bump: true},
		{name: "to empty", old: []string{"a"}, foreign: []string{"f"}, wantNames: []string{"f"}, bump: true},
		{name: "old already unregistered", old: []string{"a"}, oldGone: true, replace: defs("a"), wantNames: []string{"a"}, bump: true},
		{name: "empty to empty", old: nil, wantNames: nil},
		{name: "unregistered old, no tools", old: []string{"a"}, oldGone: true, wantNames: nil},
		{
			name:      "foreign squatter keeps old",
			foreign:   []string{"x"},
			old:       []string{"a"},
			replace:   defs("a", "x"),
			wantErr:   `tool "x" is already registered`,
			conflict:  true,
			wantNames: []string{"a", "x"},
		},
		{
			name:      "bad definition keeps old",
			old:       []string{"a"},
			replace:   []tool.Tool{{Name: "a"}},
			wantErr:   `tool "a": Execute is nil`,
			wantNames: []string{"a"},
		},
		{
			name:      "duplicate keeps old",
			old:       []string{"a"},
			replace:   defs("a", "a"),
			wantErr:   `tool "a" is already registered`,
			conflict:  true,
			wantNames: []string{"a"},
		},
		{
			name:      "name of unregistered old taken by foreign",
			foreign:   []string{"f"},
			old:       []string{"a"},
			oldGone:   true,
			replace:   defs("f"),
			wantErr:   `tool "f" is already registered`,
			conflict:  true,
			wantNames: []string{"f"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tool.NewRegistry()
			mustRegister(t, r, defs(tt.foreign...)...)
			var old *tool.Handle
			if !tt.oldNil {
				old = mustRegister(t, r, defs(tt.old...)...)
			}
			if tt.oldGone {
				old.Unregister()
			}
			ch, cancel := r.Watch()
			defer cancel()
			before := r.Version()

			h, err := r.Replace(old, tt.replace...)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Replace: %v", err)
				}
				if diff := cmp.Diff(namesOf(tt.replace), h.Names()); diff != "" {
					t.Errorf("Names() mismatch (-want +got):\n%s", diff)
				}
			} else {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Replace error = %v, want %q", err, tt.wantErr)
				}
				if got := errors.Is(err, tool.ErrConflict); got != tt.conflict {
					t.Errorf("errors.Is(err, ErrConflict) = %v, want %v", got, tt.conflict)
				}
			}
			if diff := cmp.Diff(tt.wantNames, listNames(r)); diff != "" {
				t.Errorf("registered names mismatch (-want +got):\n%s", diff)
			}
			wantVersion := before
			if tt.bump {
				wantVersion++
			}
			if got := r.Version(); got != wantVersion {
				t.Errorf("Version() = %d, want %d", got, wantVersion)
			}
			if got := pending(ch); got != tt.bump {
				t.Errorf("notification pending = %v, want %v", got, tt.bump)
			}
			if err != nil && old != nil && !tt.oldGone {
				// Old is still registered and still owns its names.
				old.Unregister()
				for _, n := range tt.old {
					if _, ok := r.Get(n); ok {
						t.Errorf("Get(%q) after old.Unregister: still registered", n)
					}
				}
			}
		})
	}
}

func TestReplacedHandleNoLongerOwnsNames(t *testing.T) {
	r := tool.NewRegistry()
	old := mustRegister(t, r, defs("a", "b")...)
	h, err := r.Replace(old, defs("a", "b")...)
	if err != nil {
		t.Fatalf("Replace: %v", err)
	}
	v := r.Version()
	old.Unregister() // must not remove the replacement's tools
	if diff := cmp.Diff([]string{"a", "b"}, listNames(r)); diff != "" {
		t.Errorf("after old.Unregister (-want +got):\n%s", diff)
	}
	if r.Version() != v {
		t.Errorf("Version() changed from %d to %d on a stale Unregister", v, r.Version())
	}
	if _, err := r.Replace(old, def("c")); err != nil {
		t.Errorf("Replace of a replaced handle: %v", err)
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, listNames(r)); diff != "" {
		t.Errorf("after Replace of a stale handle (-want +got):\n%s", diff)
	}
	h.Unregister()
	if diff := cmp.Diff([]string{"c"}, listNames(r)); diff != "" {
		t.Errorf("after h.Unregister (-want +got):\n%s", diff)
	}
}

func TestReplaceForeignHandle(t *testing.T) {
	r1, r2 := tool.NewRegistry(), tool.NewRegistry()
	h1 := mustRegister(t, r1, def("a"))
	_, err := r2.Replace(h1, def("b"))
	if want := "replace tools: the old handle belongs to another registry"; err == nil || err.Error() != want {
		t.Fatalf("Replace with another registry's handle: error %v, want %q", err, want)
	}
	if r1.Len() != 1 || r2.Len() != 0 {
		t.Errorf("Len() = %d, %d after a refused Replace; want 1, 0", r1.Len(), r2.Len())
	}
}

// TestReplaceAtomic checks that concurrent readers see either the old set or
// the new one, never their union, an empty set or a mix.
func TestReplaceAtomic(t *testing.T) {
	r := tool.NewRegistry()
	setA, setB := defs("a1", "a2", "shared"), defs("b1", "b2", "shared")
	wantA, wantB := "a1,a2,shared", "b1,b2,shared"
	h := mustRegister(t, r, setA...)

	var (
		stop  atomic.Bool
		reads atomic.Int64
		bad   atomic.Value // first bad observation
		wg    sync.WaitGroup
	)
	report := func(format string, args ...any) { bad.CompareAndSwap(nil, fmt.Sprintf(format, args...)) }
	// Cheap readers in tight loops are usually waiting on the lock when a
	// Replace releases it, so a state in between would be seen.
	for range 4 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				if n := r.Len(); n != 3 {
					report("Len: %d", n)
				}
				if _, ok := r.Get("shared"); !ok {
					report("Get: shared missing")
				}
				if i%8 == 0 {
					if got := strings.Join(listNames(r), ","); got != wantA && got != wantB {
						report("List: %q", got)
					}
				}
				reads.Add(1)
			}
		})
	}
	// Swap until the readers have had a fair share of the CPU, however the
	// scheduler treats them on a loaded machine.
	for i := 0; i < 2000 || reads.Load() < 100_000; i++ {
		next := setB
		if i%2 == 1 {
			next = setA
		}
		var err error
		if h, err = r.Replace(h, next...); err != nil {
			t.Errorf("Replace #%d: %v", i, err) // not Fatal: the readers must be stopped
			break
		}
	}
	stop.Store(true)
	wg.Wait()
	if v := bad.Load(); v != nil {
		t.Errorf("a reader observed an in-between state: %v", v)
	}
}

func TestListOrder(t *testing.T) {
	tests := []struct {
		name     string
		groups   [][]string // registered in this order
		wantList []string
	}{
		{name: "empty", wantList: []string{}},
		{name: "one group", groups: [][]string{{"c", "a", "b"}}, wantList: []string{"a", "b", "c"}},
		{
			name:     "byte order, not case-folded",
			groups:   [][]string{{"mcp__z__a", "b"}, {"B", "mcp__a__z", "_x", "a-b", "a_b"}},
			wantList: []string{"B", "_x", "a-b", "a_b", "b", "mcp__a__z", "mcp__z__a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Registering the groups in either order gives the same list.
			for _, reverse := range []bool{false, true} {
				r := tool.NewRegistry()
				for i := range tt.groups {
					g := tt.groups[i]
					if reverse {
						g = tt.groups[len(tt.groups)-1-i]
					}
					mustRegister(t, r, defs(g...)...)
				}
				got := []string{}
				for _, tl := range r.List() {
					got = append(got, tl.Name)
				}
				if diff := cmp.Diff(tt.wantList, got); diff != "" {
					t.Errorf("reverse=%v: List() mismatch (-want +got):\n%s", reverse, diff)
				}
				if r.Len() != len(tt.wantList) {
					t.Errorf("Len() = %d, want %d", r.Len(), len(tt.wantList))
				}
			}
		})
	}
}

func TestListIsFreshAndFollowsChanges(t *testing.T) {
	r := tool.NewRegistry()
	if got := r.List(); got == nil || len(got) != 0 {
		t.Errorf("List() of an empty registry = %#v, want an empty non-nil slice", got)
	}
	h := mustRegister(t, r, defs("b", "a")...)
	first := r.List()
	first[0], first[1] = def("zzz"), def("y") // the caller owns its copy
	if diff := cmp.Diff([]string{"a", "b"}, listNames(r)); diff != "" {
		t.Errorf("List() after modifying a previous result (-want +got):\n%s", diff)
	}
	mustRegister(t, r, def("c"))
	if diff := cmp.Diff([]string{"a", "b", "c"}, listNames(r)); diff != "" {
		t.Errorf("List() after Register (-want +got):\n%s", diff)
	}
	h.Unregister()
	if diff := cmp.Diff([]string{"c"}, listNames(r)); diff != "" {
		t.Errorf("List() after Unregister (-want +got):\n%s", diff)
	}
}

func TestListConcurrentWithChanges(t *testing.T) {
	r := tool.NewRegistry()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var bad atomic.Value
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				names := listNames(r)
				for i := 1; i < len(names); i++ {
					if names[i-1] >= names[i] {
						bad.CompareAndSwap(nil, strings.Join(names, ","))
					}
				}
			}
		})
	}
	for i := range 500 {
		h, err := r.Register(defs(fmt.Sprintf("t%03d", 500-i), fmt.Sprintf("u%03d", i))...)
		if err != nil {
			t.Errorf("Register #%d: %v", i, err) // not Fatal: the readers must be stopped
			break
		}
		if i%2 == 0 {
			h.Unregister()
		}
	}
	close(stop)
	wg.Wait()
	if v := bad.Load(); v != nil {
		t.Errorf("List() returned an unsorted list: %v", v)
	}
	if r.Len() != 500 {
		t.Errorf("Len() = %d, want 500", r.Len())
	}
}

func TestZeroValueRegistry(t *testing.T) {
	var r tool.Registry
	ch, cancel := r.Watch()
	defer cancel()
	mustRegister(t, &r, def("a"))
	if !pending(ch) {
		t.Error("no notification from a zero-value registry")
	}
	res, err := r.Execute(context.Background(), "a", nil)
	if err != nil || res.Text() != "a" {
		t.Errorf("Execute = %q, %v; want %q, nil", res.Text(), err, "a")
	}
}

// call records what a body saw and answers as told.
type call struct {
	out     tool.Output
	err     error
	cancel  bool // cancel the call's context before returning
	called  bool
	gotArgs string
}

func TestExecute(t *testing.T) {
	okOut := tool.Output{Content: []tool.Content{tool.Text("line 1"), tool.Text("line 2")}, Value: json.RawMessage(`{"n":1}`)}
	failed := func(msg, code string) tool.Result {
		return tool.Result{IsError: true, Content: []tool.Content{tool.Text("Error: " + msg)}, Error: &tool.ErrorInfo{Message: msg, Code: code}}
	}
	tests := []struct {
		name       string
		tool       string // name to call; "t" is registered
		args       json.RawMessage
		preCancel  bool
		body       call
		want       tool.Result
		wantErr    error // errors.Is target, nil for no error
		wantCalled bool
		wantArgs   string
	}{
		{
			name:    "unknown tool",
			tool:    "x",
			want:    failed(`unknown tool "x"`, tool.CodeUnknownTool),
			wantErr: tool.ErrNotFound,
		},
		{
			name:      "unknown tool wins over cancellation and bad args",
			tool:      "x",
			args:      json.RawMessage(`{`),
			preCancel: true,
			want:      failed(`unknown tool "x"`, tool.CodeUnknownTool),
			wantErr:   tool.ErrNotFound,
		},
		{
			name: "success", tool: "t", args: json.RawMessage(`{"a":1}`), body: call{out: okOut},
			want:       tool.Result{Content: okOut.Content, Value: okOut.Value},
			wantCalled: true, wantArgs: `{"a":1}`,
		},
		{
			name: "success without value or content", tool: "t", args: json.RawMessage(`{}`),
			want: tool.Result{}, wantCalled: true, wantArgs: `{}`,
		},
		{name: "nil args mean {}", tool: "t", args: nil, want: tool.Result{}, wantCalled: true, wantArgs: `{}`},
		{name: "empty args mean {}", tool: "t", args: json.RawMessage{}, want: tool.Result{}, wantCalled: true, wantArgs: `{}`},
		{
			name: "args passed through byte for byte", tool: "t", args: json.RawMessage(" {\"b\" : [1, 2]}\n"),
			want: tool.Result{}, wantCalled: true, wantArgs: " {\"b\" : [1, 2]}\n",
		},
		{name: "array args passed through", tool: "t", args: json.RawMessage(`[1]`), want: tool.Result{}, wantCalled: true, wantArgs: `[1]`},
		{name: "null args passed through", tool: "t", args: json.RawMessage(`null`), want: tool.Result{}, wantCalled: true, wantArgs: `null`},
		{
			name: "truncated args", tool: "t", args: json.RawMessage(`{"a":`),
			want: failed("invalid arguments: unexpected end of JSON input", tool.CodeInvalidArguments),
		},
		{
			name: "trailing garbage", tool: "t", args: json.RawMessage(`{} x`),
			want: failed("invalid arguments: invalid character 'x' after top-level value", tool.CodeInvalidArguments),
		},
		{
			name: "blank args", tool: "t", args: json.RawMessage("  "),
			want: failed("invalid arguments: unexpected end of JSON input", tool.CodeInvalidArguments),
		},
		{
			name: "invalid args win over cancellation", tool: "t", args: json.RawMessage(`nope`), preCancel: true,
			want: failed("invalid arguments: invalid character 'o' in literal null (expecting 'u')", tool.CodeInvalidArguments),
		},
		{
			name: "aborted before dispatch", tool: "t", preCancel: true, body: call{out: okOut},
			want: failed("tool call aborted before dispatch", tool.CodeAbortedBeforeDispatch),
		},
		{
			name: "body error", tool: "t", body: call{out: okOut, err: errors.New("disk on fire")},
			want: failed("disk on fire", ""), wantCalled: true, wantArgs: `{}`,
		},
		{
			name: "aborted after body", tool: "t", body: call{out: okOut, cancel: true},
			want: failed("tool call aborted", tool.CodeAborted), wantCalled: true, wantArgs: `{}`,
		},
		{
			name: "body timed out", tool: "t", body: call{err: fmt.Errorf("no answer within 5s: %w", context.DeadlineExceeded)},
			want: failed("no answer within 5s: context deadline exceeded", tool.CodeTimeout), wantCalled: true, wantArgs: `{}`,
		},
		{
			name: "a deadline error after the caller left is no timeout", tool: "t", body: call{err: context.DeadlineExceeded, cancel: true},
			want: failed("context deadline exceeded", ""), wantCalled: true, wantArgs: `{}`,
		},
		{
			name: "failing body keeps its error when aborted", tool: "t", body: call{err: errors.New("interrupted"), cancel: true},
			want: failed("interrupted", ""), wantCalled: true, wantArgs: `{}`,
		},
		{
			name: "invalid value", tool: "t", body: call{out: tool.Output{Content: okOut.Content, Value: json.RawMessage(`{`)}},
			want: failed(`tool "t" returned invalid output: value is not valid JSON: unexpected end of JSON input`,
				tool.CodeInvalidToolOutput),
			wantCalled: true, wantArgs: `{}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			body := tt.body
			r := tool.NewRegistry()
			mustRegister(t, r, tool.Tool{Name: "t", Execute: func(_ context.Context, args json.RawMessage) (tool.Output, error) {
				body.called = true
				body.gotArgs = string(args)
				if body.cancel {
					cancel()
				}
				return body.out, body.err
			}})
			if tt.preCancel {
				cancel()
			}
			got, err := r.Execute(ctx, tt.tool, tt.args)
			// A body's error is the failure's Cause, as the body returned it.
			if body.called && got.Cause != body.err {
				t.Errorf("Cause = %v, want the body's error %v", got.Cause, body.err)
			}
			got.Cause = nil
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Result mismatch (-want +got):\n%s", diff)
			}
			if tt.wantErr == nil && err != nil {
				t.Errorf("error = %v, want nil", err)
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("error = %v, want one wrapping %v", err, tt.wantErr)
				} else if err.Error() != got.Error.Message {
					t.Errorf("error text %q differs from Result.Error.Message %q", err.Error(), got.Error.Message)
				}
			}
			if body.called != tt.wantCalled {
				t.Errorf("body called = %v, want %v", body.called, tt.wantCalled)
			}
			if body.gotArgs != tt.wantArgs {
				t.Errorf("body args = %q, want %q", body.gotArgs, tt.wantArgs)
			}
		})
	}
}

func TestExecuteUnknownToolText(t *testing.T) {
	r := tool.NewRegistry()
	mustRegister(t, r, def("y"))
	res, err := r.Execute(context.Background(), "x", json.RawMessage(`{}`))
	if got, want := res.Text(), `Error: unknown tool "x"`; got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}
	if !errors.Is(err, tool.ErrNotFound) {
		t.Errorf("error %v does not wrap ErrNotFound", err)
	}
}

func TestExecuteDeadlineAfterBody(t *testing.T) {
	// A deadline that passes during the body counts as an abort too.
	r := tool.NewRegistry()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	mustRegister(t, r, tool.Tool{Name: "t", Execute: func(context.Context, json.RawMessage) (tool.Output, error) {
		cancel(context.DeadlineExceeded)
		return tool.Output{Content: []tool.Content{tool.Text("late")}}, nil
	}})
	res, err := r.Execute(ctx, "t", nil)
	if err != nil || res.Error == nil || res.Error.Code != tool.CodeAborted {
		t.Errorf("Execute = %+v, %v; want an ABORTED result", res, err)
	}
}

func TestExecuteUnregisteredDuringRun(t *testing.T) {
	r := tool.NewRegistry()
	started, release := make(chan struct{}), make(chan struct{})
	h := mustRegister(t, r, tool.Tool{Name: "slow", Execute: func(context.Context, json.RawMessage) (tool.Output, error) {
		close(started)
		<-release
		return tool.Output{Content: []tool.Content{tool.Text("done")}}, nil
	}})
	type outcome struct {
		res tool.Result
		err error
	}
	done := make(chan outcome)
	go func() {
		res, err := r.Execute(context.Background(), "slow", nil)
		done <- outcome{res, err}
	}()
	<-started
	h.Unregister() // would deadlock if Execute held the lock during the body
	if _, ok := r.Get("slow"); ok {
		t.Error("slow still registered after Unregister")
	}
	close(release)
	got := <-done
	if got.err != nil || got.res.IsError || got.res.Text() != "done" {
		t.Errorf("Execute = %+v, %v; want the body's success", got.res, got.err)
	}
	res, err := r.Execute(context.Background(), "slow", nil)
	if !errors.Is(err, tool.ErrNotFound) || res.Error.Code != tool.CodeUnknownTool {
		t.Errorf("Execute after Unregister = %+v, %v; want UNKNOWN_TOOL", res, err)
	}
}

func TestExecuteBodyMayUseRegistry(t *testing.T) {
	// The body takes the write lock; if Execute held the read lock this
	// would deadlock.
	r := tool.NewRegistry()
	mustRegister(t, r, tool.Tool{Name: "spawn", Execute: func(context.Context, json.RawMessage) (tool.Output, error) {
		h, err := r.Register(def("child"))
		if err != nil {
			return tool.Output{}, err
		}
		names := strings.Join(listNames(r), ",")
		h.Unregister()
		return tool.Output{Content: []tool.Content{tool.Text(names)}}, nil
	}})
	res, err := r.Execute(context.Background(), "spawn", nil)
	if err != nil || res.Text() != "child,spawn" {
		t.Errorf("Execute = %q, %v; want %q", res.Text(), err, "child,spawn")
	}
	if diff := cmp.Diff([]string{"spawn"}, listNames(r)); diff != "" {
		t.Errorf("names after body (-want +got):\n%s", diff)
	}
}

func TestExecuteConcurrent(t *testing.T) {
	r := tool.NewRegistry()
	mustRegister(t, r, tool.Tool{Name: "echo", Execute: func(_ context.Context, args json.RawMessage) (tool.Output, error) {
		return tool.Output{Content: []tool.Content{tool.Text(string(args))}}, nil
	}})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Go(func() {
			args := fmt.Sprintf(`{"i":%d}`, i)
			for range 100 {
				res, err := r.Execute(context.Background(), "echo", json.RawMessage(args))
				if err != nil || res.Text() != args {
					errs <- fmt.Errorf("Execute = %q, %v; want %q", res.Text(), err, args)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestWatch(t *testing.T) {
	r := tool.NewRegistry()
	ch1, cancel1 := r.Watch()
	ch2, cancel2 := r.Watch()
	defer cancel2()

	if pending(ch1) {
		t.Fatal("notification before any change")
	}
	// A burst of changes coalesces into one pending value per watcher.
	h1 := mustRegister(t, r, def("a"))
	h2 := mustRegister(t, r, def("b"))
	h1.Unregister()
	if !pending(ch1) || !pending(ch2) {
		t.Fatal("a watcher missed a burst of changes")
	}
	if pending(ch1) {
		t.Error("a burst was delivered more than once")
	}

	// Non-changes notify no one.
	noChange := []struct {
		name string
		do   func()
	}{
		{"failed Register", func() { _, _ = r.Register(def("b")) }},
		{"zero-tool Register", func() { mustRegister(t, r) }},
		{"second Unregister", h1.Unregister},
		{"failed Replace", func() { _, _ = r.Replace(h2, tool.Tool{Name: "c"}) }},
		{"Get, List, Len, Execute", func() {
			r.Get("b")
			r.List()
			r.Len()
			_, _ = r.Execute(context.Background(), "b", nil)
		}},
	}
	for _, nc := range noChange {
		nc.do()
		if pending(ch1) || pending(ch2) {
			t.Errorf("%s notified a watcher", nc.name)
		}
	}

	// A Replace is one change.
	v := r.Version()
	h3, err := r.Replace(h2, defs("c", "d")...)
	if err != nil {
		t.Fatalf("Replace: %v", err)
	}
	if !pending(ch1) || pending(ch1) || r.Version() != v+1 {
		t.Errorf("Replace: want exactly one notification and one version bump (version %d -> %d)", v, r.Version())
	}

	// cancel discards the pending value and stops delivery; it is idempotent.
	h3.Unregister()
	cancel1()
	if pending(ch1) {
		t.Error("a value was still pending after cancel")
	}
	mustRegister(t, r, def("e"))
	cancel1()
	if pending(ch1) {
		t.Error("a change was delivered after cancel")
	}
	if !pending(ch2) {
		t.Error("cancelling one watcher stopped another")
	}
}

func TestWatchWakesAfterStateIsVisible(t *testing.T) {
	// A watcher woken by a change must see that change when it re-reads.
	r := tool.NewRegistry()
	ch, cancel := r.Watch()
	defer cancel()
	seen := make(chan []string)
	go func() {
		<-ch
		seen <- listNames(r)
	}()
	mustRegister(t, r, def("a"))
	if diff := cmp.Diff([]string{"a"}, <-seen); diff != "" {
		t.Errorf("watcher's view after wake-up (-want +got):\n%s", diff)
	}
}

func BenchmarkExecute(b *testing.B) {
	r := tool.NewRegistry()
	for i := range 200 {
		mustRegisterB(b, r, def(fmt.Sprintf("mcp__srv__tool_%03d", i)))
	}
	ctx, args := context.Background(), json.RawMessage(`{"path":"/tmp"}`)
	for b.Loop() {
		_, _ = r.Execute(ctx, "mcp__srv__tool_100", args)
	}
}

func BenchmarkList(b *testing.B) {
	r := tool.NewRegistry()
	for i := range 200 {
		mustRegisterB(b, r, def(fmt.Sprintf("mcp__srv__tool_%03d", 199-i)))
	}
	for b.Loop() {
		_ = r.List()
	}
}

func mustRegisterB(b *testing.B, r *tool.Registry, tools ...tool.Tool) {
	b.Helper()
	if _, err := r.Register(tools...); err != nil {
		b.Fatalf("Register: %v", err)
	}
}
