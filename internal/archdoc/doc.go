// Package archdoc holds the test that keeps docs/architecture.md true to
// the code: its package list against `go list ./...`, and the module
// packages it says the gateway depends on against `go list -deps`.
package archdoc
