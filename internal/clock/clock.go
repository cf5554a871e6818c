// Package clock is perfgate's one time source interface: what paces load
// (internal/run) and what waits for a stack to be ready (internal/stack)
// read the time and sleep through it, so that tests inject a fake that
// advances without sleeping.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package clock

import (
	"context"
	"time"
)

// Clock is a time source.
type Clock interface {
	Now() time.Time
	// SleepUntil blocks until t (returning at once if t has passed) or
	// until ctx is done, whichever is first; it returns ctx.Err() in the
	// latter case.
	SleepUntil(ctx context.Context, t time.Time) error
}

// Real is the wall and monotonic clock of the process.
type Real struct{}

var _ Clock = Real{}

// Now implements Clock.
func (Real) Now() time.Time { return time.Now() }

// SleepUntil implements Clock with one timer per wait.
func (Real) SleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
