//go:build race

package cli

// raceEnabled reports whether the test binary runs under the race
// detector, which multiplies a process's memory several times over.
const raceEnabled = true
