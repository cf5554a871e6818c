package workload

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
)

// Random streams: each part of a synthetic workload draws from its own PCG
// stream of the seed, so changing one part of a spec (say the output
// distribution) leaves the others (the prompts) as they were.
const (
	streamInput = iota + 1
	streamOutput
	streamText
	streamPrefixPick
	streamPrefixText
	streamModel
)

// Synthesize generates spec.Requests requests from the spec. The seed is
// spec.Seed when that is non-zero, else seed; the same spec and seed always
// give the same requests (byte for byte through Write). baseDir resolves a
// relative empirical lengths file.
//
// Prompts are words drawn from a built-in vocabulary of short, common English
// words, separated by single spaces; the input length is the number of words.
// perfgate's simulator counts one token per word; a real tokenizer gives
// roughly, not exactly, one token per word for this vocabulary (so use the
// server's usage counts, as perfgate does, for anything measured). The output
// length becomes max_tokens. With API "chat" (the default) the prompt is one
// user message; with "completions" it is the prompt. Ids are "synth-000001"...
//
// With a Prefix, Count distinct prefixes of Length words are made; each request
// with probability Rate starts with one of them, chosen uniformly, and is
// tagged "prefix-K" (K from 1). The prefix counts towards the request's input
// length: the request is the prefix followed by input-Length fresh words, or,
// when its input length is shorter than the prefix, the prefix cut to the input
// length (so the length distribution is kept exactly, and the request still
// shares its leading words with the others of the prefix).
func Synthesize(spec SynthSpec, baseDir string, seed int64) ([]Request, error) {
	if ps := spec.Problems(); len(ps) > 0 {
		errs := make([]error, len(ps))
		for i, p := range ps {
			errs[i] = errors.New(p.String())
		}
		return nil, fmt.Errorf("synthetic workload: %w", errors.Join(errs...))
	}
	if spec.Seed != 0 {
		seed = spec.Seed
	}
	inLen, err := spec.Input.sampler(baseDir)
	if err != nil {
		return nil, fmt.Errorf("synthetic workload: input: %w", err)
	}
	outLen, err := spec.Output.sampler(baseDir)
	if err != nil {
		return nil, fmt.Errorf("synthetic workload: output: %w", err)
	}
	rng := func(stream uint64) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), stream)) }
	inR, outR, textR, pickR := rng(streamInput), rng(streamOutput), rng(streamText), rng(streamPrefixPick)
	modelR := rng(streamModel)
	var cum []float64 // the models' cumulative weights
	for _, m := range spec.Models {
		prev := 0.0
		if len(cum) > 0 {
			prev = cum[len(cum)-1]
		}
		cum = append(cum, prev+m.Weight)
	}

	var prefixes [][]string
	if pr := spec.Prefix; pr != nil {
		pt := rng(streamPrefixText)
		prefixes = make([][]string, pr.Count)
		for k := range prefixes {
			prefixes[k] = words(pt, pr.Length, nil)
		}
	}

	reqs := make([]Request, spec.Requests)
	var buf []string
	for i := range reqs {
		n := inLen(inR)
		req := Request{ID: fmt.Sprintf("synth-%06d", i+1), MaxTokens: outLen(outR)}
		buf = buf[:0]
		if prefixes != nil {
			// Always draw both numbers, so that raising Rate only adds prefixed
			// requests and never reshuffles which prefix a request has.
			u, k := pickR.Float64(), pickR.IntN(len(prefixes))
			if u < spec.Prefix.Rate {
				p := prefixes[k]
				buf = append(buf, p[:min(n, len(p))]...)
				req.Tags = []string{fmt.Sprintf("prefix-%d", k+1)}
			}
		}
		buf = words(textR, n-len(buf), buf)
		text := strings.Join(buf, " ")
		if len(cum) > 0 {
			u := modelR.Float64() * cum[len(cum)-1]
			k := min(sort.SearchFloat64s(cum, u), len(cum)-1)
			for k < len(cum)-1 && cum[k] <= u {
				k++
			}
			req.Model = spec.Models[k].Name
		}
		if spec.API == "completions" {
			req.Prompt = text
		} else {
			req.Messages = []Message{{Role: "user", Content: text}}
		}
		reqs[i] = req
	}
	return reqs, nil
}

// words appends n words drawn uniformly from the vocabulary to dst.
func words(r *rand.Rand, n int, dst []string) []string {
	for range n {
		dst = append(dst, vocabulary[r.IntN(len(vocabulary))])
	}
	return dst
}
