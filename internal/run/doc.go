// Package run drives load: it paces requests by a load shape (closed-loop
// users, open-loop Poisson or gamma arrivals, or a recorded trace), sends them
// through a Sender, and turns each response into a result.Record.
//
// Open-loop pacing is a Schedule: a pure function from a request's index to
// its planned send time, as an offset from the start of the repetition. The
// dispatcher sleeps until start+At(i) on the monotonic clock, so timer
// lateness never accumulates into drift, and it never waits for a response
// before sending the next request (no coordinated omission).
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package run
