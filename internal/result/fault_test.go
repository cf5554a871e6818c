package result

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func ns(s float64) int64 { return int64(s * float64(time.Second)) }

// The errors are the failures that ended from the kill on; before the
// kill, goodput counts the requests within the SLO and those the fault
// itself cut; while down, those sent from the kill until the replica was
// back that were good.
func TestMeasureFault(t *testing.T) {
	samples := []FaultSample{
		{AtNS: ns(0.5), EndNS: ns(1), OK: true, Good: true},
		{AtNS: ns(1), EndNS: ns(1.5), OK: false},               // failed before the kill: not the fault's
		{AtNS: ns(1.5), EndNS: ns(2.1), OK: false},             // cut by the kill: the fault's, and good before it
		{AtNS: ns(1.8), EndNS: ns(2.5), OK: true, Good: false}, // slow, before
		{AtNS: ns(2.2), EndNS: ns(2.3), OK: false},             // refused while down
		{AtNS: ns(2.5), EndNS: ns(3), OK: true, Good: true},    // good while down
		{AtNS: ns(3), EndNS: ns(3.5), OK: true, Good: false},   // slow while down
		{AtNS: ns(4.5), EndNS: ns(5), OK: true, Good: true},    // after it was back
		{AtNS: ns(5), EndNS: ns(5.2), OK: false, Good: false},  // a failure after: still from the kill on
	}
	f := MeasureFault(Fault{KilledS: 2, BackS: new(4.0)}, samples)
	assert.Equal(t, 3, f.Errors)
	assert.InDelta(t, 1.0, *f.BeforeRPS, 1e-9, "2 good of the sends in [0, 2 s)")
	assert.InDelta(t, 0.5, *f.DuringRPS, 1e-9, "1 good of the sends in [2 s, 4 s)")
	left, ok := f.CapacityLeft()
	assert.True(t, ok)
	assert.InDelta(t, 0.5, left, 1e-9)

	never := MeasureFault(Fault{KilledS: 2}, samples)
	assert.InDelta(t, 2.0/3, *never.DuringRPS, 1e-9, "not back: until the last send, 5 s")

	// Back before anything was sent to it: no goodput while down, not one
	// of 0.
	quick := MeasureFault(Fault{KilledS: 2, BackS: new(2.1)}, samples)
	assert.Nil(t, quick.DuringRPS)
	_, ok = quick.CapacityLeft()
	assert.False(t, ok)
}

func TestFaultValidated(t *testing.T) {
	good := Fault{Kill: "replica", Replica: 2, Replicas: 2, AtS: 30, KilledS: 30, BackS: new(35.0), Restarted: true, Errors: 3, BeforeRPS: new(8.0), DuringRPS: new(4.0)}
	for _, tc := range []struct {
		name  string
		edit  func(f *Fault)
		field string
	}{
		{"what", func(f *Fault) { f.Kill = "node" }, ".kill"},
		{"replica", func(f *Fault) { f.Replica = 3 }, ".replica"},
		{"one replica", func(f *Fault) { f.Replicas, f.Replica = 1, 1 }, ".replica"},
		{"back before", func(f *Fault) { f.BackS = new(10.0) }, ".back_s"},
		{"errors", func(f *Fault) { f.Errors = 6 }, ".errors"},
		{"negative", func(f *Fault) { f.DuringRPS = new(-1.0) }, ".during_rps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := good
			tc.edit(&f)
			v := &checker{}
			v.fault("r", &f, &Repetition{Sent: 10, Failed: 5})
			if assert.NotEmpty(t, v.probs) {
				assert.Contains(t, v.probs[0].Error(), "r"+tc.field)
			}
		})
	}
	v := &checker{}
	v.fault("r", &good, &Repetition{Sent: 10, Failed: 5})
	assert.Empty(t, v.probs)
}
