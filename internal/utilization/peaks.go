package utilization

import (
	"regexp"
	"strings"
)

// Peak is a GPU product's peak memory bandwidth and dense tensor throughput
// at 16-bit precision (FP16/BF16, no sparsity), from NVIDIA's datasheets:
// the denominators of MBU and MFU for one GPU.
type Peak struct {
	// Product names the product the figures are for ("H100 SXM").
	Product string
	// BandwidthGBs is the peak memory bandwidth, in GB/s (10^9 bytes).
	BandwidthGBs float64
	// TFLOPS is the peak dense FP16/BF16 tensor throughput, in 10^12
	// floating-point operations a second.
	TFLOPS float64
}

// peakEntry is one row of the table: a pattern over the normalised name a
// GPU source gives ("NVIDIA H100 80GB HBM3" → "H100 80GB HBM3") and the
// product's figures. The first match wins, so the more specific rows of a
// family come first.
type peakEntry struct {
	match *regexp.Regexp
	peak  Peak
}

// peaks is the table, from the products' datasheets (dense figures: the
// sparse ones are twice these and no LLM serving runs at them). A GPU it
// does not list gets no MBU or MFU until the config names its peaks
// (utilization.peak_bandwidth_gbs, utilization.peak_tflops).
var peaks = []peakEntry{
	{regexp.MustCompile(`\bH100\b.*\bPCIE\b`), Peak{"H100 PCIe", 2000, 756}},
	{regexp.MustCompile(`\bH100\b.*\bNVL\b`), Peak{"H100 NVL", 3900, 835}},
	{regexp.MustCompile(`\bH100\b`), Peak{"H100 SXM", 3350, 989}},
	{regexp.MustCompile(`\bH200\b.*\bNVL\b`), Peak{"H200 NVL", 4800, 835}},
	{regexp.MustCompile(`\bH200\b`), Peak{"H200 SXM", 4800, 989}},
	{regexp.MustCompile(`\bH20\b`), Peak{"H20", 4000, 148}},
	{regexp.MustCompile(`\bB200\b`), Peak{"B200", 8000, 2250}},
	{regexp.MustCompile(`\bA100\b.*\b80GB\b.*\bPCIE\b|\bA100\b.*\bPCIE\b.*\b80GB\b`), Peak{"A100 80GB PCIe", 1935, 312}},
	{regexp.MustCompile(`\bA100\b.*\bPCIE\b`), Peak{"A100 40GB PCIe", 1555, 312}},
	{regexp.MustCompile(`\bA100\b.*\b80GB\b`), Peak{"A100 80GB SXM", 2039, 312}},
	{regexp.MustCompile(`\bA100\b`), Peak{"A100 40GB SXM", 1555, 312}},
	{regexp.MustCompile(`\bL40S\b`), Peak{"L40S", 864, 362}},
	{regexp.MustCompile(`\bL40\b`), Peak{"L40", 864, 181}},
	{regexp.MustCompile(`\bL4\b`), Peak{"L4", 300, 121}},
	{regexp.MustCompile(`\bA10\b`), Peak{"A10", 600, 125}},
	{regexp.MustCompile(`\bRTX 4090\b`), Peak{"GeForce RTX 4090", 1008, 165}},
	{regexp.MustCompile(`\bV100\b.*\bPCIE\b`), Peak{"V100 PCIe", 900, 112}},
	{regexp.MustCompile(`\bV100\b`), Peak{"V100 SXM2", 900, 125}},
	{regexp.MustCompile(`\bT4\b`), Peak{"T4", 320, 65}},
}

// PeakOf looks a GPU up by the name its source gives ("NVIDIA H100 80GB
// HBM3", "Tesla T4", "NVIDIA A100-SXM4-80GB"): its product's peaks, and
// whether the table has it.
func PeakOf(name string) (Peak, bool) {
	n := strings.ToUpper(name)
	n = strings.NewReplacer("-", " ", "_", " ").Replace(n)
	for _, w := range []string{"NVIDIA", "TESLA", "GEFORCE"} {
		n = strings.ReplaceAll(n, w, " ")
	}
	n = strings.Join(strings.Fields(n), " ")
	for _, e := range peaks {
		if e.match.MatchString(n) {
			return e.peak, true
		}
	}
	return Peak{}, false
}

// Products lists the products the table knows, in its order: for docs and
// for an error that says what perfgate can look up.
func Products() []Peak {
	out := make([]Peak, len(peaks))
	for i, e := range peaks {
		out[i] = e.peak
	}
	return out
}
