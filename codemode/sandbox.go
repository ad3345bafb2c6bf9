package codemode

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dlclark/regexp2"
	"github.com/dop251/goja"
)

// removed are the globals a program does not get: binary buffers (a
// single call allocates what it is asked, beyond any check) and the
// standard objects that could keep work alive past the program.
var removed = []string{
	"ArrayBuffer", "SharedArrayBuffer", "DataView", "Atomics",
	"Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array",
	"Int32Array", "Uint32Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array",
	"WeakRef", "FinalizationRegistry",
}

// maxStack bounds the depth of the program's calls (goja's default is
// unbounded, so deep recursion would grow the Go heap).
const maxStack = 1024

// harden removes globals and puts a length check in front of the native
// builtins that loop or allocate in Go without returning to the
// interpreter, where neither the wall-time interrupt nor the memory
// watchdog could stop them: any Array or String method on a receiver
// longer than maxLen, Array.from/of, apply, Promise combinators on such
// an argument, and repeat and pad asked for a longer string. A sparse
// array can say it has four billion elements while holding none.
func (r *runner) harden() error {
	vm := r.vm
	vm.SetMaxCallStackSize(maxStack)
	for _, name := range removed {
		if err := vm.GlobalObject().Delete(name); err != nil {
			return err
		}
	}
	all := func(call goja.FunctionCall) []goja.Value { return append([]goja.Value{call.This}, call.Arguments...) }
	arg := func(i int) func(goja.FunctionCall) []goja.Value {
		return func(call goja.FunctionCall) []goja.Value { return []goja.Value{call.Argument(i)} }
	}
	for _, proto := range []string{"Array.prototype", "String.prototype"} {
		for _, key := range r.path(proto).GetOwnPropertyNames() {
			if key != "constructor" {
				r.guard(proto, key, all)
			}
		}
	}
	// Spread, for-of and new Set(…) walk an array in Go through its
	// iterator: the guarded values() (and not the engine's own, which
	// they would take a fast path for) refuses a long one.
	arrays := r.path("Array.prototype")
	if err := arrays.DefineDataPropertySymbol(goja.SymIterator, arrays.Get("values"), goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
		return err
	}
	r.guard("Array", "from", arg(0))
	r.guard("Function.prototype", "apply", arg(1))
	r.guard("Reflect", "apply", arg(2))
	r.guard("Reflect", "construct", arg(1))
	for _, name := range []string{"all", "allSettled", "any", "race"} {
		r.guard("Promise", name, arg(0))
	}
	if err := r.guardJSON(); err != nil {
		return err
	}
	r.guardResult("repeat", func(call goja.FunctionCall) int64 {
		return r.length(call.This) * call.Argument(0).ToInteger()
	})
	for _, name := range []string{"padStart", "padEnd"} {
		r.guardResult(name, func(call goja.FunctionCall) int64 { return call.Argument(0).ToInteger() })
	}
	return nil
}

// regexpMatchTimeout bounds one regular expression match of a program.
// goja matches what RE2 cannot (backreferences, lookaround) with
// regexp2, which backtracks without bound and never sees the VM's
// interrupt: /^(a+)+(?=b)$/ on thirty a's and a c ran for ever, past the time
// limit, holding the program's goroutine and its caller's call. A match
// that takes longer is abandoned, and goja reads it as no match.
const regexpMatchTimeout = time.Second

// boundRegexpMatches sets regexp2's timeout for the matches compiled from
// then on (regexp2 takes it at compile time; only goja uses regexp2 here).
var boundRegexpMatches = sync.OnceFunc(func() { regexp2.DefaultMatchTimeout = regexpMatchTimeout })

// path returns the object at a dotted path from the global object, one
// of the engine's builtins.
func (r *runner) path(p string) *goja.Object {
	obj := r.vm.GlobalObject()
	for name := range strings.SplitSeq(p, ".") {
		obj = obj.Get(name).ToObject(r.vm)
	}
	return obj
}

// guard replaces obj[key] (obj at a dotted path), when a function, with
// one that first refuses operands (what of picks from the call) longer
// than maxLen.
func (r *runner) guard(path, key string, of func(goja.FunctionCall) []goja.Value) {
	obj := r.path(path)
	orig, ok := goja.AssertFunction(obj.Get(key))
	if !ok {
		return
	}
	r.wrap(obj, key, orig, func(call goja.FunctionCall) {
		for _, v := range of(call) {
			if n := r.length(v); n > r.maxLen {
				panic(r.vm.NewGoError(fmt.Errorf("%w: %s.%s on %d elements; the limit is %d: work on less at a time",
					ErrMemoryLimit, path, key, n, r.maxLen)))
			}
		}
	})
}

// guardResult replaces String.prototype[key] with one that first refuses
// a result longer than maxLen, as size says.
func (r *runner) guardResult(key string, size func(goja.FunctionCall) int64) {
	obj := r.path("String.prototype")
	orig, _ := goja.AssertFunction(obj.Get(key)) // guard wrapped it: still a function
	r.wrap(obj, key, orig, func(call goja.FunctionCall) {
		if n := size(call); n > r.maxLen {
			panic(r.vm.NewGoError(fmt.Errorf("%w: %s would make a string of %d characters; the limit is %d",
				ErrMemoryLimit, key, n, r.maxLen)))
		}
	})
}

// wrap sets obj[key] to a native function that runs check, then orig.
func (r *runner) wrap(obj *goja.Object, key string, orig goja.Callable, check func(goja.FunctionCall)) {
	f := r.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		check(call)
		v, err := orig(call.This, call.Arguments...)
		if err != nil {
			panic(err) // an exception or an interrupt: goja rethrows it
		}
		return v
	})
	_ = obj.DefineDataProperty(key, f, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_FALSE)
}

// length returns v.length as an integer, 0 for a value without one.
func (r *runner) length(v goja.Value) int64 {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return 0
	}
	if s, ok := v.(goja.String); ok {
		return int64(s.Length())
	}
	obj := v.ToObject(r.vm)
	l := obj.Get("length")
	if l == nil {
		return 0
	}
	return l.ToInteger()
}

// guardJSON replaces JSON.stringify with one whose replacer first refuses
// an array or string longer than maxLen (stringify walks a sparse array's
// every index in Go), and keeps it and JSON.parse for the runner's own
// use, so that a program replacing them cannot forge its result.
func (r *runner) guardJSON() error {
	obj := r.path("JSON")
	orig, _ := goja.AssertFunction(obj.Get("stringify"))
	parse, ok := goja.AssertFunction(obj.Get("parse"))
	if orig == nil || !ok {
		return fmt.Errorf("the engine has no JSON")
	}
	check := func(call goja.FunctionCall) goja.Value {
		v := call.Argument(1)
		if n := r.length(v); n > r.maxLen {
			panic(r.vm.NewGoError(fmt.Errorf("%w: JSON.stringify of %d elements; the limit is %d", ErrMemoryLimit, n, r.maxLen)))
		}
		return v
	}
	guarded := func(call goja.FunctionCall) goja.Value {
		replacer := r.vm.ToValue(check)
		switch theirs, isFunc := goja.AssertFunction(call.Argument(1)); {
		case isFunc:
			replacer = r.vm.ToValue(func(c goja.FunctionCall) goja.Value {
				v, err := theirs(c.This, c.Argument(0), check(c))
				if err != nil {
					panic(err)
				}
				return v
			})
		case !goja.IsUndefined(call.Argument(1)) && !goja.IsNull(call.Argument(1)):
			check(goja.FunctionCall{Arguments: []goja.Value{goja.Undefined(), call.Argument(0)}})
			replacer = call.Argument(1) // an allow-list of keys: only the top is checked
		}
		v, err := orig(call.This, call.Argument(0), replacer, call.Argument(2))
		if err != nil {
			panic(err)
		}
		return v
	}
	stringify := r.vm.ToValue(guarded)
	r.stringifyFn, _ = goja.AssertFunction(stringify)
	r.parseFn = parse
	return obj.DefineDataProperty("stringify", stringify, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_FALSE)
}
