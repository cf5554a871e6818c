package result

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The v1 files under testdata/v1 were written by perfgate before the result
// had a schema of its own: copies of the baselines committed at the
// repository's root, and a run against the simulator with SLOs, telemetry
// and telemetry gates, cost and an eval suite (see testdata/v1/README.md).
// Each reads into this version's types with every figure it held: the same
// JSON but for the schema and the SLOs, which become milliseconds.
func TestReadV1(t *testing.T) {
	slos := map[string][]SLO{
		"chat-c8.json":                {{TTFT: 250, TPOT: 25}},
		"chat-poisson.json":           {{TTFT: 250, TPOT: 25}},
		"quality-cost-telemetry.json": {{TTFT: 250, TPOT: 13.5, E2E: 8000}},
	}
	files, err := filepath.Glob("testdata/v1/*.json")
	require.NoError(t, err)
	require.Len(t, files, len(slos), "a v1 file without its SLOs in this test")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			var v1 map[string]any
			require.NoError(t, json.Unmarshal(data, &v1))
			require.Equal(t, SchemaV1, v1["schema"], "testdata/v1 holds v1 files")

			r, err := Read(f)
			require.NoError(t, err)
			assert.Equal(t, Schema, r.Schema, "a v1 file reads as this version")
			var got []SLO
			for _, s := range r.Scenarios {
				got = append(got, s.SLO)
			}
			assert.Equal(t, slos[filepath.Base(f)], got, "SLOs in ms")

			// Every other figure is the file's: v1 with its schema and SLOs
			// converted is, as JSON, what this version writes.
			want := v1
			want["schema"] = Schema
			for _, s := range want["scenarios"].([]any) {
				sc := s.(map[string]any)
				ms := map[string]any{}
				for k, v := range sc["slo"].(map[string]any) {
					ms[k+"_ms"] = v.(float64) / 1e6
				}
				sc["slo"] = ms
			}
			b, err := json.Marshal(r)
			require.NoError(t, err)
			var v2 map[string]any
			require.NoError(t, json.Unmarshal(b, &v2))
			assert.Equal(t, want, v2)
		})
	}
}

// A v1 file read and written again is a v2 file that reads the same.
func TestV1WrittenAgainIsV2(t *testing.T) {
	r, err := Read("testdata/v1/quality-cost-telemetry.json")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "v2.json")
	require.NoError(t, Write(path, r))
	var probe struct {
		Schema    string `json:"schema"`
		Scenarios []struct {
			SLO map[string]float64 `json:"slo"`
		} `json:"scenarios"`
	}
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &probe))
	assert.Equal(t, Schema, probe.Schema)
	assert.Equal(t, map[string]float64{"ttft_ms": 250, "tpot_ms": 13.5, "e2e_ms": 8000}, probe.Scenarios[0].SLO)
	back, err := Read(path)
	require.NoError(t, err)
	assert.Equal(t, r, back)
}

// A stored gate is text: a gate on a metric this perfgate does not know
// (renamed or retired) or with a tolerance it cannot read no longer makes
// the file unreadable, as it did when reading a result consulted the
// metric catalogue. Compare is where it is left ungated (with a warning).
func TestReadKeepsGatesAsText(t *testing.T) {
	data, err := os.ReadFile("testdata/v1/chat-c8.json")
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	sc := m["scenarios"].([]any)[0].(map[string]any)
	sc["gates"] = []any{
		map[string]any{"metric": "ttft.p99", "tolerance": "+15%"},
		map[string]any{"metric": "ttft.p42", "tolerance": "+10%"},
		map[string]any{"metric": "tpot.p99", "tolerance": "+5 bananas"},
	}
	data, err = json.Marshal(m)
	require.NoError(t, err)
	r, err := Decode(data, "old.json")
	require.NoError(t, err)
	assert.Equal(t, []Gate{{"ttft.p99", "+15%"}, {"ttft.p42", "+10%"}, {"tpot.p99", "+5 bananas"}}, r.Scenarios[0].Gates)
}
