//go:build race

package main

// raceEnabled: the race detector instruments every memory access and slows
// timing several fold, so timing-precision tests run in the plain build only
// (make test runs them there).
const raceEnabled = true
