package workload

import "math/rand/v2"

// Sampler returns a function drawing one value from d, as Synthesize draws
// lengths (an integer >= 1, clamped to [Min, Max] where those are set);
// baseDir resolves an empirical file. The run package draws session think
// times (milliseconds) with it.
func (d Dist) Sampler(baseDir string) (func(*rand.Rand) int, error) {
	return d.sampler(baseDir)
}
