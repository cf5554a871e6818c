package config

// The values of load.overload (Load.Overload): what a run does with an
// open-loop scenario the server cannot keep up with (docs/gating.md,
// "Sustainable load").
const (
	// OverloadFail, the default, names the scenario and fails the run
	// (exit 3) after writing its result.
	OverloadFail = "fail"
	// OverloadMeasure declares that the scenario measures overload on
	// purpose: it is measured and labelled "overloaded (declared)".
	OverloadMeasure = "measure"
)

// Overloads says whether the scenario with this load declares that it
// measures overload (load.overload: measure).
func (l Load) Overloads() bool { return l.Overload == OverloadMeasure }

// loadOverload checks load.overload of the scenario at p: fail or measure,
// on an open loop that searches no capacity.
func (v *validator) loadOverload(p string, s *Scenario) {
	l := s.Load
	given := v.set(p+".overload", l.Overload != "")
	switch {
	case !given && l.Overload == "":
		return
	case l.Overload != OverloadFail && l.Overload != OverloadMeasure:
		v.add(p+".overload", "must be %s (the default: an overloaded scenario fails the run) or %s (it measures overload on purpose), got %q",
			OverloadFail, OverloadMeasure, l.Overload)
	case l.Type == LoadClosed:
		v.add(p+".overload", "only for poisson, gamma and trace loads: a closed load cannot overload the server (each user waits for its answer, so the load follows the server)")
	case s.Capacity != nil:
		v.add(p+".overload", "a capacity search counts a probe the server cannot keep up with as over capacity: remove load.overload")
	case s.Fault != nil:
		v.add(p+".overload", "a fault disturbs the load on purpose and is judged by its recovery, not the overload detector: remove load.overload")
	case l.Type == LoadStep:
		v.add(p+".overload", "a step load overloads on purpose and is judged by its recovery, not the overload detector: remove load.overload")
	}
}

// resultOverload is load.overload as a result records it: "measure", or
// nothing for the default.
func (l Load) resultOverload() string {
	if l.Overloads() {
		return OverloadMeasure
	}
	return ""
}
