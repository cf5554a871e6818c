package run

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/result"
)

// ProbeServer asks the server what it is: GET /version (vLLM, the simulator)
// for engine and version. It never fails: what the server does not say is left
// empty. Models are filled by the caller from /v1/models.
func ProbeServer(ctx context.Context, baseURL string) result.Server {
	var s result.Server
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(baseURL, "/")+"/version", nil)
	if err != nil {
		return s
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return s
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil || resp.StatusCode != http.StatusOK || !json.Valid(body) {
		return s
	}
	var v struct {
		Engine  string `json:"engine"`
		Version string `json:"version"`
	}
	if json.Unmarshal(body, &v) == nil {
		s.Engine, s.Version = v.Engine, v.Version
	}
	s.Raw = body
	return s
}
