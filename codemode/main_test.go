package codemode_test

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// regexp2 keeps one clock goroutine for the process while a bounded
	// match's deadline is ahead (regexpMatchTimeout past the last match):
	// a single goroutine that ends by itself, not a leak of a program.
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/dlclark/regexp2.runClock"))
}
