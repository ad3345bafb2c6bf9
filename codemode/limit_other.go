//go:build !linux

package codemode

// limitMemory does nothing here: only the heap watchdog bounds a program.
func limitMemory(int64) {}
