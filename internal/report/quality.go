package report

import (
	"fmt"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/compare/stat"
)

// qualityMaxOutput is the most runes of a model's output a report shows: the
// outputs are untrusted, and long.
const qualityMaxOutput = 80

// qualityMaxExamples is how many changed items a report shows per suite.
const qualityMaxExamples = 3

// writeQualityText renders a scenario's eval suites for a terminal: a table
// of the quality gates, output drift, the reasons and warnings, and a few
// items whose answers changed, their outputs cleaned and cut.
func writeQualityText(p *verdictPrinter, s *compare.Scenario) error {
	for _, q := range s.Quality {
		p.printf("  eval suite %s · %d items · accuracy %s → %s\n", verdictClean(q.Name), q.N,
			qualityAccuracy(q.Baseline), qualityAccuracy(q.Candidate))
		if len(q.Gates) > 0 {
			tw := tabwriter.NewWriter(p, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "    gate\tbaseline\tcandidate\tchange\tp\ttolerance\toutcome")
			for _, g := range q.Gates {
				fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\t%s\t%s\t%s\n", verdictClean(g.Title), qualityRate(g.Baseline), qualityRate(g.Candidate),
					qualityChange(g.Change), verdictPString(g.PAdjusted), verdictClean(g.Tolerance), verdictOutcomeWord(g.Outcome))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
		p.printf("    %s\n", qualityDrift(q))
		for _, n := range qualityNotes(q, verdictClean) {
			p.printf("    %s: %s\n", n.subject, n.text)
		}
		for _, ex := range q.Examples[:min(len(q.Examples), qualityMaxExamples)] {
			p.printf("    changed %s (%s → %s): %q → %q\n", verdictClean(ex.ID), qualityPass(ex.BaselinePass), qualityPass(ex.CandidatePass),
				clean(ex.BaselineOutput, qualityMaxOutput), clean(ex.CandidateOutput, qualityMaxOutput))
		}
	}
	return p.err
}

// writeQualityMarkdown renders a scenario's eval suites as markdown, with
// the changed items' outputs as escaped inline text when examples is set.
func writeQualityMarkdown(p *verdictPrinter, s *compare.Scenario, examples bool) {
	for _, q := range s.Quality {
		p.println()
		p.printf("**Eval suite %s** · %d items · accuracy %s → %s\n", verdictMD(q.Name), q.N,
			qualityAccuracy(q.Baseline), qualityAccuracy(q.Candidate))
		if len(q.Gates) > 0 {
			p.println()
			p.println("| gate | baseline | candidate | change | p | tolerance | outcome |")
			p.println("|:--|--:|--:|--:|--:|--:|:--|")
			for _, g := range q.Gates {
				p.printf("| %s | %s | %s | %s | %s | %s | %s |\n", verdictMD(g.Title), qualityRate(g.Baseline), qualityRate(g.Candidate),
					qualityChange(g.Change), verdictPString(g.PAdjusted), verdictMD(g.Tolerance), verdictOutcomeMarkdown(g.Outcome))
			}
		}
		p.println()
		p.println("- " + qualityDrift(q))
		for _, n := range qualityNotes(q, verdictMD) {
			p.printf("- **%s**: %s\n", n.subject, n.text)
		}
		if examples && len(q.Examples) > 0 {
			p.println()
			p.println("| changed item | baseline | candidate |")
			p.println("|:--|:--|:--|")
			for _, ex := range q.Examples[:min(len(q.Examples), qualityMaxExamples)] {
				p.printf("| %s | %s %s | %s %s |\n", verdictMD(ex.ID),
					qualityPassMark(ex.BaselinePass), qualityOutputMD(ex.BaselineOutput),
					qualityPassMark(ex.CandidatePass), qualityOutputMD(ex.CandidateOutput))
			}
		}
	}
}

// qualityNotes are the reasons of the gates that did not pass, every gate
// warning, and the suite's warnings, each text once.
func qualityNotes(q compare.Suite, esc func(string) string) []verdictNote {
	var out []verdictNote
	seen := map[string]bool{}
	add := func(subject, text string) {
		if text = esc(text); text != "" && !seen[text] {
			seen[text] = true
			out = append(out, verdictNote{subject, text})
		}
	}
	for _, g := range q.Gates {
		if g.Outcome != stat.Pass {
			add(esc(g.Title), g.Reason)
		}
		for _, w := range g.Warnings {
			add(esc(g.Title), w)
		}
	}
	for _, w := range q.Warnings {
		add("warning", w)
	}
	return out
}

// qualityAccuracy is "90.0% (180/200)".
func qualityAccuracy(a compare.Accuracy) string {
	if a.N == 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f%% (%d/%d)", 100*float64(a.Rate.Estimate), a.Pass, a.N)
}

// qualityRate is a mean as a percent with its interval: "90.0% [85.1, 93.4]".
func qualityRate(iv compare.Interval) string {
	if !iv.Estimate.Finite() {
		return "—"
	}
	s := fmt.Sprintf("%.1f%%", 100*float64(iv.Estimate))
	if iv.Lo.Finite() && iv.Hi.Finite() {
		s += fmt.Sprintf(" [%.1f, %.1f]", 100*float64(iv.Lo), 100*float64(iv.Hi))
	}
	return s
}

// qualityChange is a change in points with its interval: "-30.0 [-36.2, -23.8] points".
func qualityChange(iv compare.Interval) string {
	pts := func(x compare.Num) string {
		v := float64(x)
		switch {
		case math.IsNaN(v):
			return "?"
		case math.IsInf(v, 0):
			return verdictSigned(v, false)
		}
		return fmt.Sprintf("%+.1f", 100*v)
	}
	if !iv.Estimate.Finite() {
		return "—"
	}
	return pts(iv.Estimate) + " [" + pts(iv.Lo) + ", " + pts(iv.Hi) + "] points"
}

// qualityDrift is the output drift line.
func qualityDrift(q compare.Suite) string {
	if q.N == 0 {
		return "output drift: no items compared"
	}
	s := fmt.Sprintf("outputs identical to the baseline's: %d of %d (%s)", q.Drift.Identical, q.N, qualityRate(q.Drift.Share))
	if q.Drift.Differ > 0 {
		s += fmt.Sprintf("; where they differ, the first difference is at character %d, word %d (medians)",
			q.Drift.FirstDiffChar, q.Drift.FirstDiffWord)
	}
	return s
}

func qualityPass(pass bool) string {
	if pass {
		return "pass"
	}
	return "fail"
}

func qualityPassMark(pass bool) string {
	if pass {
		return "✅"
	}
	return "❌"
}

// qualityOutputMD is an output as escaped inline markdown, cut to
// qualityMaxOutput runes, its newlines shown as ⏎ so that it stays in its
// table cell.
func qualityOutputMD(s string) string {
	s = strings.NewReplacer("\r\n", "⏎", "\n", "⏎", "\r", "⏎").Replace(s)
	if s == "" {
		return "(empty)"
	}
	return verdictMD(clean(s, qualityMaxOutput))
}

// qualityGateName is "arithmetic accuracy".
func qualityGateName(q compare.Suite, g compare.QualityGate) string {
	return verdictClean(q.Name) + " " + verdictClean(g.Title)
}

// qualityChangeEstimate is "-30.0 points".
func qualityChangeEstimate(g compare.QualityGate) string {
	if !g.Change.Estimate.Finite() {
		return "—"
	}
	return fmt.Sprintf("%+.1f points", 100*float64(g.Change.Estimate))
}
