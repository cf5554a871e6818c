package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/safeio"
)

// ErrFrontierReport is ReadFrontierResult's error for a report file.
var ErrFrontierReport = errors.New("a report file, not a result: --frontier reads results")

// ReadFrontierResult reads a result file for the frontier: a report file
// (perfgate gate's) is refused with ErrFrontierReport, and the rest is
// result.Decode's, which bounds and validates what it reads.
func ReadFrontierResult(path string) (*result.Result, error) {
	data, err := safeio.ReadFile(path, result.MaxFileBytes)
	var tooLarge *safeio.TooLargeError
	if errors.As(err, &tooLarge) {
		return nil, fmt.Errorf("read result %s: the file is larger than %s, the most perfgate reads for a result", path, safeio.FormatBytes(result.MaxFileBytes))
	}
	if err != nil {
		return nil, fmt.Errorf("read result: %w", err)
	}
	var probe struct {
		Schema string `json:"schema"`
	}
	if json.Unmarshal(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), &probe) == nil && probe.Schema == DocumentSchema {
		return nil, fmt.Errorf("%s: %w", path, ErrFrontierReport)
	}
	return result.Decode(data, path)
}
