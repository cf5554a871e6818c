package hostile

import "slices"

// Mode is the failure a Server models; see the package doc for what each
// does and the server or attack it stands for.
type Mode string

// The modes.
const (
	// Healthy is a well-behaved server.
	Healthy Mode = "healthy"

	// NoOutput streams only a finish_reason chunk and a usage chunk that
	// claims completion tokens: no text.
	NoOutput Mode = "no-output"
	// EmptyContent streams content "" deltas only.
	EmptyContent Mode = "empty-content"

	// EndlessEvent streams data: lines that never end with a blank line.
	EndlessEvent Mode = "endless-event"
	// EndlessLine streams one data: line that never ends.
	EndlessLine Mode = "endless-line"
	// EndlessComments streams ": keep-alive" comments forever, no data.
	EndlessComments Mode = "endless-comments"
	// HugeHeaders sends a response header of HugeHeaderBytes.
	HugeHeaders Mode = "huge-headers"
	// HugeErrorBody answers 500 with a body that never ends.
	HugeErrorBody Mode = "huge-error-body"
	// NoHeaders reads the request and never answers.
	NoHeaders Mode = "no-headers"
	// TrickleBody writes a stream that never finishes, a byte every
	// Options.TrickleEvery.
	TrickleBody Mode = "trickle-body"

	// Redirect answers 307 to the same path on Elsewhere.
	Redirect Mode = "redirect"

	// HugeUsage reports usage.completion_tokens of HugeTokens.
	HugeUsage Mode = "huge-usage"
	// NegativeUsage reports usage.completion_tokens of NegativeTokens.
	NegativeUsage Mode = "negative-usage"
	// InflatedUsage reports InflateFactor times the tokens streamed.
	InflatedUsage Mode = "inflated-usage"

	// CloseAfterStream closes the connection after every streamed response
	// without saying so, as llama.cpp's server does.
	CloseAfterStream Mode = "close-after-stream"
	// CloseOnReuse reads the second and later requests of a connection and
	// closes it without an answer.
	CloseOnReuse Mode = "close-on-reuse"
	// Truncated cuts the connection after a few tokens.
	Truncated Mode = "truncated"

	// MalformedChunk sends a data: event that is not JSON mid-stream.
	MalformedChunk Mode = "malformed-chunk"
	// ErrorEvent sends an error object as a data: event mid-stream and ends
	// without [DONE], as llama.cpp does.
	ErrorEvent Mode = "error-event"
	// Status answers Options.Status with a JSON error body.
	Status Mode = "status"

	// MetricsNotProm answers /metrics with {}.
	MetricsNotProm Mode = "metrics-not-prom"
	// MetricsEndless answers /metrics with a page that never ends.
	MetricsEndless Mode = "metrics-endless"
	// VersionDeep answers the identity endpoints with DeepJSONBytes of "[".
	VersionDeep Mode = "version-deep"
)

// Figures the modes use, exported so that tests can name them.
const (
	// HugeHeaderBytes is the size of HugeHeaders' header value.
	HugeHeaderBytes = 2 << 20
	// HugeTokens is HugeUsage's completion_tokens.
	HugeTokens int64 = 9000000000000000000
	// NegativeTokens is NegativeUsage's completion_tokens.
	NegativeTokens int64 = -1000
	// InflateFactor is how many times the streamed tokens InflatedUsage
	// reports.
	InflateFactor = 100
	// DeepJSONBytes is the size of VersionDeep's answer.
	DeepJSONBytes = 200_000
	// DefaultStatusMessage is Status mode's message when
	// Options.StatusMessage is empty.
	DefaultStatusMessage = "the request exceeds the available context size"
	// ErrorEventMessage is the message of ErrorEvent's error event.
	ErrorEventMessage = "hostile: generation failed mid-stream"
)

// modes lists every mode, Healthy first.
var modes = []Mode{
	Healthy, NoOutput, EmptyContent,
	EndlessEvent, EndlessLine, EndlessComments, HugeHeaders, HugeErrorBody, NoHeaders, TrickleBody,
	Redirect,
	HugeUsage, NegativeUsage, InflatedUsage,
	CloseAfterStream, CloseOnReuse, Truncated,
	MalformedChunk, ErrorEvent, Status,
	MetricsNotProm, MetricsEndless, VersionDeep,
}

// Modes returns every mode, Healthy first: for tests that try them all.
func Modes() []Mode { return slices.Clone(modes) }

// Valid reports whether m is one of the modes.
func (m Mode) Valid() bool { return slices.Contains(modes, m) }

// The paths a mode can apply to.
const (
	pathChat        = "/v1/chat/completions"
	pathCompletions = "/v1/completions"
	pathMetrics     = "/metrics"
	pathHealth      = "/health"
	pathModels      = "/v1/models"
	pathVersion     = "/version"
)

// identityPaths are the engines' identity endpoints perfgate probes.
var identityPaths = []string{pathVersion, "/props", "/info", "/get_server_info"}

func isCompletion(path string) bool { return path == pathChat || path == pathCompletions }

// domain reports whether m can apply to path at all, and whether it does
// when Options.Paths is empty.
func (m Mode) domain(path string) (can, byDefault bool) {
	switch m {
	case Healthy:
		return false, false
	case Redirect, CloseOnReuse:
		return true, true
	case Status, HugeHeaders, HugeErrorBody, NoHeaders, TrickleBody:
		return true, isCompletion(path)
	case MetricsNotProm, MetricsEndless:
		return path == pathMetrics, path == pathMetrics
	case VersionDeep:
		can = slices.Contains(identityPaths, path)
		return can, can
	}
	return isCompletion(path), isCompletion(path) // the stream modes
}
