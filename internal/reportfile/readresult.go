package reportfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/safeio"
)

// ErrReportNotResult is ReadResult's error for a report file.
var ErrReportNotResult = errors.New("a report file, not a result: --frontier reads results")

// ReadResult reads a result file for the frontier: a report file
// (perfgate gate's) is refused with ErrReportNotResult, and the rest is
// result.Decode's, which bounds and validates what it reads.
func ReadResult(path string) (*result.Result, error) {
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
	if json.Unmarshal(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), &probe) == nil && probe.Schema == Schema {
		return nil, fmt.Errorf("%s: %w", path, ErrReportNotResult)
	}
	return result.Decode(data, path)
}
