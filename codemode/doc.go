// Package codemode presents a registry view to a model as a typed code API
// and runs the short programs the model writes against it, so that one
// model turn can chain several tool calls and keep their intermediate
// results out of the model's context.
//
// [NewAPI] turns a list of tools into a TypeScript declaration: one
// namespace per server under `tools`, one function per tool named by
// [Ident], argument types from the input JSON Schema and doc comments from
// the descriptions. [API.Declaration] is the whole of it; a large catalog
// is described progressively, [API.Namespaces] (one line per namespace)
// first and then [API.Namespace] for the one the model asks for.
//
// [Run] executes a program (JavaScript; the body of an async function, so
// it may `await` and `return`) in an in-process sandbox. The program sees
// `tools.<server>.<tool>(args)` and `tools.call(publicName, args)`, each
// returning a Promise of {text, structured, isError, content}; `console.log`;
// `JSON`; and `sleep(ms)`. Nothing else: no require, no file, network or
// timers. Every call it makes goes through the [View] it was given, with
// the caller's context, so the caller's identity, policy, audit and
// timeouts apply to each as to a direct call; a tool absent from the view
// is an unknown tool. Wall time, the number of calls, the output and the
// memory a program may use are bounded (see [Options]); cancelling the
// context ends the program and every call in flight. A failing program's
// error ([*Error]) carries its line and column.
//
// [Tools] are search_api, describe_api and run_code over a view: what a
// gateway or an agent lists in place of the tools themselves.
//
// See docs/codemode.md for the bounds, how memory is bounded, and why the
// interpreter is goja.
package codemode
