//go:build !unix

package main

import "time"

// processCPU is not measured off Unix; the CPU column reads "–".
func processCPU() time.Duration { return 0 }
