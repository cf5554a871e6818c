package run

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/config"
)

// failingInjector cannot make its fault.
type failingInjector struct{ repaired atomic.Bool }

func (f *failingInjector) Inject(context.Context, config.Fault) error {
	return errors.New("kill replica 2: operation not permitted")
}

func (f *failingInjector) Repaired(context.Context) (time.Time, bool, error) {
	f.repaired.Store(true)
	return time.Time{}, false, nil
}

// A fault that cannot be made stops the repetition with its own error, not
// one about a repetition that ended early: the run measures nothing else
// than what was asked.
func TestAFaultThatFailsStopsTheRepetition(t *testing.T) {
	var calls atomic.Int64
	sc := scenario("lost", config.Load{Type: config.LoadPoisson, Rate: 50, RecoveryWindow: time.Second}, warmRequests(8))
	sc.Config.Duration = 5 * time.Second
	sc.Config.SLO = config.SLO{TTFT: time.Second}
	sc.Config.Fault = &config.Fault{Kill: config.FaultReplica, At: 50 * time.Millisecond}
	inj := &failingInjector{}
	m := &Measurement{Dispatcher: &Dispatcher{Sender: steadySender(time.Millisecond, 2, false, &calls)},
		Repetitions: config.Repetitions{Min: 1, Max: 1}, Seed: 1, RunID: "f", Injector: inj, Replicas: 2}
	_, err := m.Measure(t.Context(), sc)
	require.Error(t, err)
	var fe *FaultError
	require.ErrorAs(t, err, &fe)
	assert.Contains(t, err.Error(), "the scenario's fault: kill replica 2: operation not permitted")
	assert.Less(t, calls.Load(), int64(100), "the load stopped at the failed fault, not after its 5 s (about 250 requests)")
}
