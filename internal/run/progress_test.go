package run

import (
	"bytes"
	"strings"
	"testing"
)

// The progress line of a repetition mentions sessions when it has any.
func TestProgressMentionsSessions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sessions int
		want     string
	}{
		{"no sessions", 0, "chat rep 1/3  4/4 requests  "},
		{"sessions", 2, "chat rep 1/3  4/4 requests  2 sessions  "},
	} {
		var out bytes.Buffer
		p := NewProgress(&out, false)
		p.Begin("chat rep 1/3", 4)
		for range 4 {
			p.Add(true)
		}
		for range tc.sessions {
			p.AddSession()
		}
		p.End()
		if got := out.String(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("progress line (%s) = %q, want it to start %q", tc.name, got, tc.want)
		}
	}
}
