//go:build race

package stat

// raceEnabled: the race detector slows the simulation-heavy calibration
// tests several fold, so they run fewer trials under it.
const raceEnabled = true
