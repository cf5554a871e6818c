package traceimport

// The mooncake format: Mooncake's open trace (kvcache-ai/Mooncake,
// FAST'25 traces; the format as Dynamo's benchmarks/data_generator README
// and AIPerf's trace replay guide describe it): JSONL of {"timestamp" (ms
// since the trace's start), "input_length", "output_length", "hash_ids":
// [...]}, where each hash id names one block of block_size (512) tokens
// and two requests with the same leading hash ids share that prefix.
//
// The prompts are synthesised so that shared blocks really share text:
// hash id h is always the same block of words (drawn from the workload
// vocabulary by a generator seeded with --seed and h), a prompt is its
// blocks in order cut to input_length words (the last block partly), so two
// requests with the same first k hash ids start with the same k blocks of
// text and a prefix cache hits on them as in production. One word is about
// one token (perfgate's simulator counts exactly one).

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"strings"

	"github.com/perfgate/perfgate/internal/safeio"
	"github.com/perfgate/perfgate/internal/workload"
)

var mooncakeKeys = []string{"timestamp", "input_length", "output_length", "hash_ids"}

// mooncake reads the mooncake format.
func (im *importer) mooncake(r io.Reader) error {
	vocab := workload.Vocabulary()
	block := im.o.BlockSize
	if block == 0 {
		block = DefaultBlockSize
	}
	seq := 0
	err := workload.ReadLines(safeio.LimitReader(r, workload.MaxFileBytes, im.File), im.File, func(n int, line []byte) {
		line = bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(line)) == 0 {
			return
		}
		seq++
		im.mooncakeLine(n, seq, line, block, vocab)
	})
	if err := im.readErr(err); err != nil {
		return err
	}
	im.checkTimes("timestamp")
	if im.o.Redact != nil {
		im.sum.note("--redact: the prompts are synthesised from the trace's hash ids, so there was no text to redact")
	}
	return nil
}

func (im *importer) mooncakeLine(n, seq int, line []byte, block int, vocab []string) {
	members, ok := im.members(n, "", line)
	if !ok {
		return
	}
	before := im.Count()
	var (
		at            *float64
		inLen, outLen int
		hasIn, hasOut bool
		hashes        []int64
		hasHashes     bool
		req           workload.Request
	)
	seen := map[string]bool{}
	for _, m := range members {
		seen[m.Key] = true
		if null(m) {
			continue
		}
		switch m.Key {
		case "timestamp":
			var v float64
			if im.Decode(n, m, &v, "number") {
				if v < 0 || v > workload.MaxArrivalMS {
					im.Errorf(n, m.Key, "want milliseconds from 0 to 1e9, got %s", workload.Describe(m.Raw))
				} else {
					at = &v
				}
			}
		case "input_length":
			hasIn = im.Decode(n, m, &inLen, "integer")
			if hasIn && (inLen < 1 || inLen > workload.MaxLength) {
				im.Errorf(n, m.Key, "want an integer from 1 to %d, got %d", workload.MaxLength, inLen)
			}
		case "output_length":
			hasOut = im.Decode(n, m, &outLen, "integer")
			req.MaxTokens = outLen
		case "hash_ids":
			hasHashes = true
			if m.Raw[0] != '[' {
				im.Errorf(n, m.Key, "want an array of block hash ids (integers), got %s", workload.Describe(m.Raw))
				continue
			}
			var elems []json.RawMessage
			_ = json.Unmarshal(m.Raw, &elems)
			for i, e := range elems {
				var h int64
				f := workload.Member{Key: "hash_ids[" + itoa(i) + "]", Raw: e}
				if im.Decode(n, f, &h, "integer") {
					hashes = append(hashes, h)
				}
			}
		default:
			im.unknownKey(n, "", m.Key, mooncakeKeys)
		}
	}
	if !hasIn && !seen["input_length"] {
		im.Errorf(n, "input_length", "required: the prompt's length in tokens")
	}
	if !hasHashes {
		im.Errorf(n, "hash_ids", "required: the prompt's block hash ids")
	}
	if hasIn && hasHashes && im.Count() == before {
		lo, hi := (len(hashes)-1)*block+1, len(hashes)*block
		if inLen < lo || inLen > hi {
			im.Errorf(n, "hash_ids", "%d blocks of %d tokens hold from %d to %d tokens, got input_length %d (is --block-size right?)", len(hashes), block, lo, hi, inLen)
		}
	}
	defaulted := im.maxTokens(n, "output_length", hasOut || seen["output_length"], &req, "the trace gives no output_length")
	if im.Count() > before {
		return
	}
	words := make([]string, 0, inLen)
	for _, h := range hashes {
		words = mooncakeBlock(words, im.o.Seed, h, min(block, inLen-len(words)), vocab)
	}
	req.ID = im.id("", seq)
	req.Messages = []workload.Message{{Role: "user", Content: strings.Join(words, " ")}}
	if im.add(n, "", req, at) && defaulted {
		im.sum.Defaulted++
	}
}

// mooncakeBlock appends the first k words of hash id h's block to dst: the
// same words for the same seed and h, wherever h appears.
func mooncakeBlock(dst []string, seed, h int64, k int, vocab []string) []string {
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(h)))
	for range k {
		dst = append(dst, vocab[rng.IntN(len(vocab))])
	}
	return dst
}
