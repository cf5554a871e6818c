package report

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWriteSiteForBrowser writes the 5,000-run site to $PERFGATE_SITE_OUT
// for a look in a browser (scripts/screenshot-report.sh); skipped without it.
func TestWriteSiteForBrowser(t *testing.T) {
	out := os.Getenv("PERFGATE_SITE_OUT")
	if out == "" {
		t.Skip("set PERFGATE_SITE_OUT to write the site for a browser check")
	}
	_, err := WriteSite(out, siteHistory([]string{"chat", "long-context"}, 5000, 2000, 3500), SiteOptions{RepoURL: "https://github.com/acme/serving"})
	require.NoError(t, err)
}
