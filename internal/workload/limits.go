package workload

// Bounds on what a workload (or eval suite) file may hold. A file is the
// user's, but it may also come from a pull request: these keep a file that
// is wrong (or hostile) from exhausting perfgate or running a load that
// means nothing, and each says why it is the size it is.
const (
	// MaxLineBytes is the longest line perfgate reads in a workload, an
	// eval suite or a lengths file: 8 MiB. A prompt of a million tokens
	// (the longest context windows served today) is about 4 MB of text,
	// and JSON escaping can add as much again.
	MaxLineBytes = 8 << 20
	// MaxFileBytes is the largest workload file perfgate reads: 256 MiB.
	// Every request is held in memory for the run; 256 MiB is a hundred
	// thousand requests of 2.5 KB, more than any committed workload.
	MaxFileBytes = 256 << 20
	// MaxLength is the largest max_tokens (and min_tokens) a request may
	// ask for, and the largest length a synthetic distribution may name:
	// 1,048,576 (2^20). No model served today generates, or reads, more
	// tokens than that in one request.
	MaxLength = 1 << 20
	// MaxArrivalMS is the latest arrival_ms a trace may give: 10^9 ms,
	// about 11.6 days. A trace that long is never replayed in a CI job, and
	// the bound keeps arrival_ms / speedup far inside a time.Duration.
	MaxArrivalMS = 1e9
	// MaxModelName bounds a line's model (an adapter's name): servers'
	// names are paths or short ids.
	MaxModelName = 256
	// MaxSynthModels bounds a synthetic workload's mix of models: vLLM
	// serves up to --max-loras at once, a few dozen at most.
	MaxSynthModels = 1024
	// MaxTurns is the most turns one session may have: 1,000. A chat
	// session of a thousand turns outgrows any context window long before.
	MaxTurns = 1000
	// MaxTemperature is the highest temperature a request may set: 2, the
	// top of the OpenAI API's range. Engines accept more, but past 2 the
	// output is noise, and noise is not a workload.
	MaxTemperature = 2.0
	// MaxSynthRequests is the most requests a synthetic workload may
	// generate: a million, all held in memory for the run.
	MaxSynthRequests = 1_000_000
	// MaxPrefixes is the most shared prefixes a synthetic workload may
	// make: 10,000. Prefix caching is exercised by a few dozen.
	MaxPrefixes = 10_000
)
