//go:build !race

package stat

// raceEnabled: see race_on_test.go.
const raceEnabled = false
