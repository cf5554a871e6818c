package run

import (
	"context"
	"time"
)

// Clock is the dispatcher's time source. The real one reads the monotonic
// clock; tests inject a fake that advances without sleeping.
type Clock interface {
	Now() time.Time
	// SleepUntil blocks until t (returning at once if t has passed) or until
	// ctx is done, whichever is first; it returns ctx.Err() in the latter case.
	SleepUntil(ctx context.Context, t time.Time) error
}

// RealClock is the wall/monotonic clock of the process.
type RealClock struct{}

var _ Clock = RealClock{}

// Now implements Clock.
func (RealClock) Now() time.Time { return time.Now() }

// SleepUntil implements Clock with one timer per wait.
func (RealClock) SleepUntil(ctx context.Context, t time.Time) error {
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
