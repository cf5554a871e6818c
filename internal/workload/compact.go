package workload

import (
	"bytes"
	"encoding/json"
)

// Compact returns raw without insignificant whitespace, as the workload
// file and the importers carry tools, tool_choice and response_format;
// raw that is not valid JSON is returned as it is (the caller reports it).
func Compact(raw json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return raw
	}
	return json.RawMessage(buf.Bytes())
}
