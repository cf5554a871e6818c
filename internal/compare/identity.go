package compare

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/result"
)

// MismatchError refuses a comparison between results that measured different
// things or ran on different hardware: a difference in their numbers would
// say nothing about the pull request. It is a usage error (exit 2) unless
// --allow-mismatch.
type MismatchError struct {
	Differences []Difference
}

func (e *MismatchError) Error() string {
	var b strings.Builder
	b.WriteString("the baseline and the candidate are not comparable:")
	for _, d := range e.Differences {
		b.WriteString("\n  " + d.String())
	}
	b.WriteString("\n(re-run the baseline on this hardware with this workload, or pass --allow-mismatch to compare anyway)")
	return b.String()
}

// String is "scenario chat: workload hash: sha256:ab… → sha256:cd…".
func (d Difference) String() string {
	prefix := ""
	if d.Scenario != "" {
		prefix = "scenario " + d.Scenario + ": "
	}
	return fmt.Sprintf("%s%s: %s → %s", prefix, d.Field, orNone(d.Baseline), orNone(d.Candidate))
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// identityDifferences splits the differences between two results' identities
// into mismatches (hardware: GPU model and count, simulated or not) and
// changes (what a pull request is expected to change: engine and version,
// model, the stack's command, image and flags, the config, perfgate itself,
// the client host's CPU).
func identityDifferences(b, c *result.Identity) (mismatches, changes []Difference) {
	diff := func(list *[]Difference, field, bv, cv string) {
		if bv != cv {
			*list = append(*list, Difference{Field: field, Baseline: bv, Candidate: cv})
		}
	}
	diff(&mismatches, "GPU", gpuString(b.GPUs), gpuString(c.GPUs))
	diff(&mismatches, "simulated", fmt.Sprint(b.Simulated), fmt.Sprint(c.Simulated))

	diff(&changes, "engine", b.Server.Engine, c.Server.Engine)
	diff(&changes, "engine version", b.Server.Version, c.Server.Version)
	diff(&changes, "model", b.Target.Model, c.Target.Model)
	diff(&changes, "model revision", b.Target.Revision, c.Target.Revision)
	diff(&changes, "quantization", b.Target.Quantization, c.Target.Quantization)
	diff(&changes, "served models", strings.Join(b.Server.Models, ", "), strings.Join(c.Server.Models, ", "))
	diff(&changes, "stack kind", b.Stack.Kind, c.Stack.Kind)
	if removed, added := argDiff(b.Stack.Command, c.Stack.Command); removed != "" || added != "" {
		changes = append(changes, Difference{Field: "stack command", Baseline: removed, Candidate: added})
	}
	diff(&changes, "image", b.Stack.Image, c.Stack.Image)
	diff(&changes, "image id", b.Stack.ImageID, c.Stack.ImageID)
	if removed, added := argDiff(b.Stack.Args, c.Stack.Args); removed != "" || added != "" {
		changes = append(changes, Difference{Field: "stack args", Baseline: removed, Candidate: added})
	}
	diff(&changes, "GPU driver", gpuField(b.GPUs, func(g result.GPU) string { return g.Driver }), gpuField(c.GPUs, func(g result.GPU) string { return g.Driver }))
	diff(&changes, "CUDA", gpuField(b.GPUs, func(g result.GPU) string { return g.CUDA }), gpuField(c.GPUs, func(g result.GPU) string { return g.CUDA }))
	diff(&changes, "config hash", short(b.ConfigHash), short(c.ConfigHash))
	diff(&changes, "perfgate version", b.PerfgateVersion, c.PerfgateVersion)
	diff(&changes, "client CPU", hostString(b.Host), hostString(c.Host))
	return mismatches, changes
}

// gpuField is one field of the GPUs, the distinct values joined; "" when
// no GPU is known.
func gpuField(gpus []result.GPU, f func(result.GPU) string) string {
	var vals []string
	for _, g := range gpus {
		if v := f(g); v != "" && !slices.Contains(vals, v) {
			vals = append(vals, v)
		}
	}
	return strings.Join(vals, ", ")
}

// priceString describes a price: "$2.5/GPU-hour × 1 GPU".
func priceString(p *result.Price) string {
	if p == nil {
		return ""
	}
	return fmt.Sprintf("$%s/GPU-hour × %d GPU", strconv.FormatFloat(p.USDPerGPUHour, 'f', -1, 64), p.GPUs)
}

// ScenarioMismatches lists what makes two results of one scenario measure
// different things: the requests (workload hash), the load shape, the SLOs
// that define goodput and, for a capacity scenario, the search (its SLOs,
// range, resolution, rule, repetitions and budget define what "capacity"
// means, as the load shape defines a latency).
func ScenarioMismatches(b, c *result.ScenarioResult) []Difference {
	var out []Difference
	add := func(field, bv, cv string) {
		if bv != cv {
			out = append(out, Difference{Scenario: c.Name, Field: field, Baseline: bv, Candidate: cv})
		}
	}
	add("workload hash", short(b.WorkloadHash), short(c.WorkloadHash))
	add("load shape", jsonString(b.Load), jsonString(c.Load))
	add("SLO", jsonString(b.SLO), jsonString(c.SLO))
	// A capacity scenario against one measured at a fixed load is a
	// mismatch too: one side's capacity would have nothing to compare with.
	add("capacity search", capacitySearchString(b), capacitySearchString(c))
	// Sampling parameters are part of the workload (and its hash); listed
	// by parameter, they say what about it changed. A result from before
	// they were recorded has none to compare.
	if b.Sampling != nil && c.Sampling != nil {
		add("sampling", samplingString(b.Sampling), samplingString(c.Sampling))
	}
	// A salted side measures prefills, an unsalted one a warm prompt cache.
	// A result from before salting has no value: perfgate's version change
	// says enough there.
	if b.Salt != "" && c.Salt != "" {
		add("prompt salting", b.Salt, c.Salt)
	}
	return out
}

// argDiff describes how a command line changed as the arguments only one
// side has ("--quantization fp8" added); flags are kept with their values.
func argDiff(b, c []string) (removed, added string) {
	if slices.Equal(b, c) {
		return "", ""
	}
	bt, ct := tokens(b), tokens(c)
	var rm, ad []string
	for _, t := range bt {
		if !slices.Contains(ct, t) {
			rm = append(rm, t)
		}
	}
	for _, t := range ct {
		if !slices.Contains(bt, t) {
			ad = append(ad, t)
		}
	}
	if len(rm) == 0 && len(ad) == 0 { // the same arguments in another order
		return strings.Join(b, " "), strings.Join(c, " ")
	}
	return strings.Join(rm, " "), strings.Join(ad, " ")
}

// tokens groups "--flag value" into one token, so that a changed value shows
// as the flag with its old and new value.
func tokens(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") && !strings.Contains(a, "=") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			a += " " + args[i+1]
			i++
		}
		out = append(out, a)
	}
	return out
}

func gpuString(gpus []result.GPU) string {
	if len(gpus) == 0 {
		return ""
	}
	count := map[string]int{}
	var models []string
	for _, g := range gpus {
		if count[g.Model] == 0 {
			models = append(models, g.Model)
		}
		count[g.Model]++
	}
	parts := make([]string, len(models))
	for i, m := range models {
		parts[i] = fmt.Sprintf("%d× %s", count[m], m)
	}
	return strings.Join(parts, ", ")
}

func hostString(h result.Host) string {
	if h.CPUModel == "" {
		return fmt.Sprintf("%d CPUs", h.CPUs)
	}
	return fmt.Sprintf("%s (%d CPUs)", h.CPUModel, h.CPUs)
}

// samplingString is "temperature=0; top_p=0.9", parameters in name order.
func samplingString(s map[string]string) string {
	parts := make([]string, 0, len(s))
	for _, k := range slices.Sorted(maps.Keys(s)) {
		parts = append(parts, k+"="+s[k])
	}
	return strings.Join(parts, "; ")
}

// capacitySearchString is the scenario's capacity search as JSON; "" for a
// scenario measured at one load.
func capacitySearchString(s *result.ScenarioResult) string {
	if s.Capacity == nil {
		return ""
	}
	return jsonString(s.Capacity.Search)
}

func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// short cuts a sha256:… digest to 12 hex digits for messages.
func short(h string) string {
	if rest, ok := strings.CutPrefix(h, "sha256:"); ok && len(rest) > 12 {
		return "sha256:" + rest[:12]
	}
	return h
}
