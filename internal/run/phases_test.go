package run

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPhases(t *testing.T) {
	tests := []struct {
		name string
		gha  bool
		want []string
	}{
		{"terminal", false, []string{"==> starting stack  [0s]", "    ready after 3s", "==> warming up  [0s]", "    window 1"}},
		{"github actions", true, []string{"::group::starting stack", "    ready after 3s", "::endgroup::", "::group::warming up", "    window 1", "::endgroup::"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			p := NewPhases(&b, tt.gha)
			p.Begin("starting stack")
			p.Printf("ready after %ds", 3)
			p.Begin("warming up")
			p.Printf("window %d", 1)
			p.End()
			p.End() // a second End closes nothing
			assert.Equal(t, tt.want, strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n"))
		})
	}
	var nilPhases *Phases // quiet runs have none; every method is a no-op
	nilPhases.Begin("x")
	nilPhases.Printf("y")
	nilPhases.End()
}
