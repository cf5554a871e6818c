package run

import (
	"fmt"

	"github.com/perfgate/perfgate/internal/config"
)

// openLoopPool is the connection pool of an open-loop scenario with no
// max_in_flight: room for bursts. It may open more when a burst needs them;
// a run that then runs out of files stops with a *LocalError.
const openLoopPool = 256

// Connections is how many connections a run of cfg's scenarios keeps to the
// target at most at once (as far as it can be known before the run), and the
// scenario that needs the most: the largest closed-loop concurrency (of every
// point of a sweep, and capacity.max for a search of users) or max_in_flight,
// openLoopPool for an uncapped open loop, plus the eval items answered alone
// (quality.concurrency).
func Connections(cfg *config.Config) (n int, scenario string) {
	n = 1
	for _, s := range cfg.Measured() {
		need := max(s.Load.Concurrency, s.Load.MaxInFlight)
		if c := s.Capacity; c != nil && c.Metric == config.CapacityConcurrency {
			need = max(need, int(c.Max))
		}
		if s.Load.Type != config.LoadClosed && s.Load.MaxInFlight == 0 {
			need = max(need, openLoopPool)
		}
		if need > n {
			n, scenario = need, s.Name
		}
	}
	if cfg.Quality.Enabled() {
		n += cfg.Quality.Concurrency
	}
	return n, scenario
}

// filesReserve is what perfgate keeps open besides its connections to the
// target: standard streams, the stack's log and its guard, the records file,
// telemetry scrapes, the Docker socket, the Go runtime's own.
const filesReserve = 64

// OpenFilesError says perfgate may not open as many files as the run needs:
// its own limit, not the server's failure.
type OpenFilesError struct {
	// Need is the files the run needs, for Connections connections to the
	// target (the most of them in Scenario).
	Need, Connections int
	Scenario          string
	// Soft and Hard are the process's limits (RLIMIT_NOFILE).
	Soft, Hard uint64
}

func (e *OpenFilesError) Error() string {
	who := "the run"
	if e.Scenario != "" {
		who = "scenario " + e.Scenario
	}
	return fmt.Sprintf("perfgate needs about %d open files (%d connections to the target for %s, and %d of its own), but this machine lets it open only %d (ulimit -n; hard limit %d): raise the limit (e.g. `ulimit -n %d` before perfgate) or lower the load",
		e.Need, e.Connections, who, filesReserve, e.Soft, e.Hard, max(4096, e.Need*2))
}

// FileLimit reads and sets the limit on open files (RLIMIT_NOFILE). The
// zero value uses the process's own limit.
type FileLimit struct {
	Get func() (soft, hard uint64, err error)
	Set func(soft, hard uint64) error
}

// Ensure makes sure perfgate may open the files a run of cfg needs: when
// the soft limit is lower, it raises it to what the run needs if the hard
// limit allows (the Go runtime raises it to the hard limit at start on most
// systems, so this is rarely needed), and when even the hard limit is lower
// it fails with an *OpenFilesError before anything is sent. A limit it
// cannot read is not checked.
func (l FileLimit) Ensure(cfg *config.Config) error {
	get, set := l.Get, l.Set
	if get == nil {
		get, set = getNofile, setNofile
	}
	conns, scenario := Connections(cfg)
	need := uint64(conns + filesReserve)
	soft, hard, err := get()
	if err != nil || soft >= need {
		return nil
	}
	if hard >= need && set != nil && set(need, hard) == nil {
		return nil
	}
	return &OpenFilesError{Need: int(need), Connections: conns, Scenario: scenario, Soft: soft, Hard: hard}
}
