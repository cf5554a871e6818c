package exit

import (
	"errors"
	"fmt"
	"testing"
)

func TestCode(t *testing.T) {
	base := errors.New("boom")
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, OK},
		{"plain error is a failed run", base, RunFailed},
		{"usage", UsageError(base), Usage},
		{"run", RunError(base), RunFailed},
		{"regression", WithCode(Regression, base), Regression},
		{"wrapped usage", fmt.Errorf("load config: %w", UsageError(base)), Usage},
	}
	for _, tt := range tests {
		if got := Code(tt.err); got != tt.want {
			t.Errorf("%s: Code(%v) = %d, want %d", tt.name, tt.err, got, tt.want)
		}
	}
	if WithCode(Usage, nil) != nil {
		t.Errorf("WithCode(Usage, nil) != nil")
	}
	if !errors.Is(UsageError(base), base) {
		t.Errorf("UsageError does not unwrap to its cause")
	}
}
