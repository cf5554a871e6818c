package result

import (
	"math"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeHistogram(t *testing.T) {
	encode := func(lo, hi int64, digits int) []byte {
		h := hdrhistogram.New(lo, hi, digits)
		require.NoError(t, h.RecordValue(1500))
		enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		require.NoError(t, err)
		return enc
	}
	h, err := DecodeHistogram(encode(histMinUS, histMaxUS, histDigits))
	require.NoError(t, err, "DecodeHistogram(perfgate's geometry)")
	assert.Equal(t, int64(1), h.TotalCount())

	_, err = DecodeHistogram(encode(1, math.MaxInt64/2, 5))
	assert.ErrorContains(t, err, "at 5 digits, want perfgate's 1 to 3600000000 at 3", "DecodeHistogram(a huge geometry)")
	_, err = DecodeHistogram([]byte("not a histogram"))
	assert.ErrorContains(t, err, "malformed histogram", "DecodeHistogram(garbage)")
	_, err = DecodeHistogram(nil)
	assert.Error(t, err, "DecodeHistogram(nothing)")
}
