package result

// WorkloadShape summarises what a scenario's workload asked of the server,
// so that a reviewer sees what was replayed without opening the file:
// lengths, API mix, arrivals, prefix sharing and sessions. It is computed
// from the workload's requests as written (workload.Stats), before any
// run, so it describes the input, never a measurement. Lengths are in
// words, perfgate's unit where it has no tokenizer (its simulator counts
// one token a word); a model's tokenizer gives more tokens than words.
//
// The workload's hash (ScenarioResult.WorkloadHash) is its identity; the
// shape is a description of it, and two results with one hash have one
// shape.
type WorkloadShape struct {
	// Requests is the number of requests in the workload (every turn of a
	// session counts as one).
	Requests int `json:"requests"`
	// Chat and Completions split Requests by API: messages or prompt.
	Chat        int `json:"chat"`
	Completions int `json:"completions"`
	// PromptWords are the prompts' lengths in words (a chat request's: the
	// words of all its messages), as written: a later turn of a session
	// carries its history at run time on top of these.
	PromptWords Lengths `json:"prompt_words"`
	// MaxTokens are the requests' max_tokens.
	MaxTokens Lengths `json:"max_tokens"`
	// PrefixSharing is how much of the prompts' text repeats a prefix an
	// earlier request sent.
	PrefixSharing PrefixSharing `json:"prefix_sharing"`
	// Sessions describes the conversations; nil when no request has a
	// session_id.
	Sessions *SessionShape `json:"sessions,omitempty"`
	// Arrivals describes the trace's arrival times; nil when no request
	// has arrival_ms.
	Arrivals *ArrivalShape `json:"arrivals,omitempty"`
	// Tags are the most frequent tags (at most five), by number of
	// requests that carry them, most first, then by name; DistinctTags
	// counts every tag.
	Tags         []TagCount `json:"tags,omitempty"`
	DistinctTags int        `json:"distinct_tags,omitempty"`
	// Sampling counts the requests that set each sampling parameter
	// (temperature, top_p, seed, ignore_eos, min_tokens); a parameter no
	// request sets is left out.
	Sampling map[string]int `json:"sampling,omitempty"`
	// ResponseFormat and Tools count the requests that set response_format
	// (structured output) and tools (function calling).
	ResponseFormat int `json:"response_format,omitempty"`
	Tools          int `json:"tools,omitempty"`
}

// Lengths are nearest-rank percentiles of a list of lengths (the value at
// rank ⌈p·n/100⌉ of the sorted list), so each is a length some request
// has; all zero for an empty list.
type Lengths struct {
	P50 int `json:"p50"`
	P90 int `json:"p90"`
	P99 int `json:"p99"`
	Max int `json:"max"`
}

// PrefixSharing measures the prompt text that repeats what an earlier
// request (in file order) began with, word by word: the part a server's
// prefix cache could serve.
type PrefixSharing struct {
	// Words is the total of the prompts' words; SharedWords the total, over
	// the requests, of the longest prefix of its words that an earlier
	// request's words also begin with.
	Words       int `json:"words"`
	SharedWords int `json:"shared_words"`
	// Ratio is SharedWords / Words (0 when Words is 0).
	Ratio float64 `json:"ratio"`
	// Prefixes32 counts the distinct shared prefixes (each request's
	// longest shared prefix, above) of at least 32 words.
	Prefixes32 int `json:"prefixes_32"`
}

// SessionShape describes a workload's sessions (requests with session_id).
type SessionShape struct {
	// Count is the number of sessions; Requests the requests (turns) in
	// them.
	Count    int `json:"count"`
	Requests int `json:"requests"`
	// TurnsMin, TurnsP50 and TurnsMax are the turns a session has
	// (nearest-rank median).
	TurnsMin int `json:"turns_min"`
	TurnsP50 int `json:"turns_p50"`
	TurnsMax int `json:"turns_max"`
	// ThinkMS describes the think_ms of the later turns that set one; nil
	// when none does.
	ThinkMS *ThinkShape `json:"think_ms,omitempty"`
	// PrefixSharingWithHistory is PrefixSharing.Ratio as the server sees
	// the prompts: a later turn carries every earlier turn's words, a
	// prefix already sent by the turn before, so they count as shared and
	// as words, and the turn's own words count as not shared. The answers
	// the server gives, also carried, are not in the file and are left out.
	PrefixSharingWithHistory float64 `json:"prefix_sharing_with_history"`
}

// ThinkShape describes the think times of a workload's later turns.
type ThinkShape struct {
	// Count is the later turns that set think_ms; P50 and P90 are
	// nearest-rank percentiles of their values, in milliseconds.
	Count int     `json:"count"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
}

// ArrivalShape describes a trace's arrival times (arrival_ms).
type ArrivalShape struct {
	// Requests is the number of requests with arrival_ms (in a session
	// workload, its sessions' first turns).
	Requests int `json:"requests"`
	// Span is the last arrival less the first, in seconds.
	Span Seconds `json:"span_s"`
	// MeanRate is the arrivals per second: (Requests − 1) / Span, the
	// reciprocal of the mean gap between arrivals; 0 when Span is 0.
	MeanRate float64 `json:"mean_rate"`
	// Burstiness is the coefficient of variation of the gaps between
	// consecutive arrivals (their standard deviation over their mean):
	// 0 for evenly spaced arrivals, 1 for a Poisson process, above 1 for
	// bursts; 0 when there are fewer than two gaps or Span is 0.
	Burstiness float64 `json:"burstiness"`
	// PeakPerSecond is the most arrivals in any one-second window
	// [t, t+1 s) that starts at an arrival.
	PeakPerSecond int `json:"peak_per_second"`
}

// TagCount is one tag and the number of requests that carry it.
type TagCount struct {
	Tag      string `json:"tag"`
	Requests int    `json:"requests"`
}
