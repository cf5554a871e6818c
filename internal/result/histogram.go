package result

import (
	"fmt"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// DecodeHistogram decodes one of a repetition's histograms
// (Repetition.Histograms) and checks it has the geometry perfgate writes
// (1 µs to 1 hour at 3 significant digits). A result file may come from a
// pull request: a histogram of another geometry (1 to 2^63 at 5 digits, say)
// would make every later walk over its buckets take millions of steps and
// hundreds of megabytes, so it is refused, and so is a malformed encoding
// (as an error, never a panic).
func DecodeHistogram(enc []byte) (h *hdrhistogram.Histogram, err error) {
	defer func() {
		if r := recover(); r != nil {
			h, err = nil, fmt.Errorf("malformed histogram: %v", r)
		}
	}()
	h, err = hdrhistogram.Decode(enc)
	if err != nil {
		return nil, fmt.Errorf("malformed histogram: %w", err)
	}
	if h.LowestTrackableValue() != histMinUS || h.HighestTrackableValue() != histMaxUS || h.SignificantFigures() != histDigits {
		return nil, fmt.Errorf("histogram of %d to %d µs at %d digits, want perfgate's %d to %d at %d",
			h.LowestTrackableValue(), h.HighestTrackableValue(), h.SignificantFigures(), histMinUS, histMaxUS, histDigits)
	}
	return h, nil
}
