package run

import (
	"context"
	"fmt"
	"time"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
)

// Injector makes a scenario's fault on the stack: the session's, which
// started the replicas.
type Injector interface {
	// Inject makes the fault now (kills the replica) and begins the
	// stack's repair (its restart, where the fault restarts) without
	// waiting for it. It returns once the fault is made.
	Inject(ctx context.Context, f config.Fault) error
	// Repaired waits until the stack is whole again (the killed replica
	// restarted and healthy) and returns when it became so on clock;
	// restarted false when the fault left the replica down, which
	// Repaired then restarts before it returns (the next repetition starts
	// whole), back then the zero time.
	Repaired(ctx context.Context) (back time.Time, restarted bool, err error)
}

// PlannedFault is a plan's fault: made At into the plan by Inject. Run
// fills Start and Made.
type PlannedFault struct {
	At     time.Duration
	Config config.Fault
	Inject func(ctx context.Context, f config.Fault) error

	// Start is when the plan started, Made when the fault was made (zero
	// when the plan ended before its time, or the fault failed).
	Start, Made time.Time
}

// FaultError says a fault could not be made: the run fails (exit 3), for
// the repetition would measure something other than what was asked.
type FaultError struct{ Err error }

func (e *FaultError) Error() string { return "the scenario's fault: " + e.Err.Error() }
func (e *FaultError) Unwrap() error { return e.Err }

// make waits until the fault's time and makes it, stopping the plan with a
// *FaultError when it cannot.
func (f *PlannedFault) make(ctx context.Context, clk Clock, start time.Time, stop context.CancelCauseFunc) {
	f.Start = start
	if err := clk.SleepUntil(ctx, start.Add(f.At)); err != nil {
		return // the plan ended first
	}
	made := clk.Now()
	if err := f.Inject(ctx, f.Config); err != nil {
		if ctx.Err() == nil {
			stop(&FaultError{Err: err})
		}
		return
	}
	f.Made = made
}

// faultResult is what the plan's fault did, once the plan has ended and
// the stack is repaired: nil without a fault.
func (m *Measurement) faultResult(ctx context.Context, p *Plan, replicas int, samples []result.FaultSample) (*result.Fault, error) {
	f := p.Fault
	if f == nil {
		return nil, nil
	}
	back, restarted, err := m.Injector.Repaired(ctx)
	if err != nil {
		return nil, &FaultError{Err: err}
	}
	if f.Made.IsZero() {
		return nil, &FaultError{Err: fmt.Errorf("not made: the repetition ended before %s", f.At)}
	}
	res := result.Fault{Kill: f.Config.Kill, Replica: f.Config.ReplicaIndex(replicas) + 1, Replicas: replicas,
		AtS: f.At.Seconds(), KilledS: f.Made.Sub(f.Start).Seconds(), Restarted: restarted}
	var last int64
	for _, s := range samples {
		last = max(last, s.EndNS)
	}
	if restarted && back.Sub(f.Start) <= time.Duration(last) {
		res.BackS = new(back.Sub(f.Start).Seconds())
	}
	res = result.MeasureFault(res, samples)
	return &res, nil
}
