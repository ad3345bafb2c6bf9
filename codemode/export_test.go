package codemode

import "testing"

// SetMaxLine bounds the lines Run reads from a program's process to n
// bytes for the rest of the test (its process keeps its own bound).
func SetMaxLine(t *testing.T, n int) {
	old := maxLine
	maxLine = n
	t.Cleanup(func() { maxLine = old })
}

// SetMaxProcesses bounds the programs' processes running at once to n
// for the rest of the test.
func SetMaxProcesses(t *testing.T, n int) {
	old := processSlots
	processSlots = newSlots(n)
	t.Cleanup(func() { processSlots = old })
}

// RunningProcesses is how many programs' processes run now.
func RunningProcesses() int { return processSlots.running() }
