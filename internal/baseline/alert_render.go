package baseline

import (
	"fmt"
	"io"
	"strings"

	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/textsafe"
)

// AlertMarker is the first line of an alert issue's body: how the action
// finds the one issue it keeps open, and never another.
const AlertMarker = "<!-- perfgate: nightly alert -->"

// describe is one alert's sentence: the metric, its levels and change,
// the tolerance, the commits the change came in by, and what changed in
// the identity between them. code formats a commit; safe makes a text
// from the history safe for the medium.
func describe(a Alert, code, safe func(string) string) string {
	m, err := metric.Lookup(a.Metric)
	if err != nil {
		return clean(a.Metric, 40) // FindAlerts took it from the gates: cannot happen
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %s → %s %s (%s, beyond %s)", safe(a.Scenario), m.Name,
		formatValue(m, a.Before), formatValue(m, a.After), m.Unit(), dash(FormatChange(m, a.Before, a.After)), safe(a.Tolerance))
	fmt.Fprintf(&b, " from %s on; the change came in after %s", at(a.To, code), at(a.From, code))
	if len(a.Identity) > 0 {
		ids := make([]string, len(a.Identity))
		for i, id := range a.Identity {
			ids[i] = safe(id)
		}
		fmt.Fprintf(&b, "; the identity changed between them: %s", strings.Join(ids, ", "))
	}
	return b.String()
}

// at names an entry: its commit (code-formatted by code) and date.
func at(e Entry, code func(string) string) string {
	if c := shortCommit(e.Commit); c != "" {
		return code(c) + " (" + formatDate(e.Date) + ")"
	}
	return formatDate(e.Date)
}

// WriteAlerts writes the alerts as lines for a terminal or a CI log: each
// open regression (marked NEW when the newest record made it) and each
// regression the newest record ended. Every text from the history is made
// safe to print.
func WriteAlerts(w io.Writer, a Alerts) error {
	plain := func(s string) string { return clean(s, 120) }
	if len(a.Open) == 0 && len(a.Recovered) == 0 {
		_, err := fmt.Fprintln(w, "alerts: none: no metric's history shows a level worse than its tolerance")
		return err
	}
	for _, x := range a.Open {
		tag := "regression, open"
		if x.New {
			tag = "NEW REGRESSION"
		}
		if _, err := fmt.Fprintf(w, "%s: %s\n", tag, describe(x, plain, plain)); err != nil {
			return err
		}
	}
	for _, r := range a.Recovered {
		if _, err := fmt.Fprintf(w, "recovered: %s; back from %s on\n", describe(r.Alert, plain, plain), at(r.Back.To, plain)); err != nil {
			return err
		}
	}
	return nil
}

// WriteAlertIssue writes the body of the one GitHub issue a nightly keeps
// for its alerts: the marker, the open regressions with their commit
// ranges and identity changes, and how to read them. With none open it
// writes the note that closes the issue, naming what recovered.
func WriteAlertIssue(w io.Writer, a Alerts) error {
	code := func(s string) string { return "`" + strings.ReplaceAll(clean(s, 40), "`", "") + "`" }
	safe := func(s string) string { return textsafe.Markdown(s, 120) }
	var b strings.Builder
	b.WriteString(AlertMarker + "\n")
	if len(a.Open) == 0 {
		b.WriteString("### perfgate: the nightly is back within tolerance\n\n")
		for _, r := range a.Recovered {
			fmt.Fprintf(&b, "- %s; back from %s on.\n", describe(r.Alert, code, safe), at(r.Back.To, code))
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	b.WriteString("### perfgate: the nightly found a regression of the default branch\n\n")
	for _, x := range a.Open {
		fmt.Fprintf(&b, "- %s.\n", describe(x, code, safe))
	}
	b.WriteString("\nA change point is where a metric's history moves to a new level (E-divisive means, " +
		"three runs of the new level at least); it is listed here when the new level is worse than the one " +
		"before by more than the metric's gate tolerance. The commits after the first and up to the second " +
		"are where to look; an identity change between them is the first suspect. This issue is updated " +
		"by each nightly and closed when the level comes back.\n")
	_, err := io.WriteString(w, b.String())
	return err
}
