//go:build !linux

package codemode

import "os"

// selfExe is this program, to run again.
func selfExe() (string, error) { return os.Executable() }

// limitMemory does nothing here: only the heap watchdog bounds a program.
func limitMemory(int64) {}
