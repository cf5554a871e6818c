package run

import "github.com/perfgate/perfgate/internal/clock"

// Clock is the dispatcher's time source (clock.Clock). The real one reads
// the monotonic clock; tests inject a fake that advances without sleeping.
type Clock = clock.Clock

// RealClock is the wall/monotonic clock of the process (clock.Real).
type RealClock = clock.Real
