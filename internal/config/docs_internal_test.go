package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docs/ is for users: the packages' working notes (internal/CONTRACTS.md)
// live beside the code, and no user doc is headed as internal notes.
func TestDocsHoldNoInternalNotes(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		assert.NotEqual(t, "CONTRACTS.md", filepath.Base(file), "internal notes among the user docs")
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		first, _, _ := strings.Cut(string(b), "\n")
		assert.NotContains(t, strings.ToLower(first), "internal", "%s is headed as internal notes", file)
	}
	_, err = os.Stat("../CONTRACTS.md")
	assert.NoError(t, err, "internal/CONTRACTS.md")
}
