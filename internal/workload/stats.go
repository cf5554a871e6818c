package workload

import (
	"cmp"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/perfgate/perfgate/internal/result"
)

// Shape figures that Stats computes, named so that docs and tests agree.
const (
	// SharedPrefixMinWords is the shortest shared prefix that
	// PrefixSharing.Prefixes32 counts: 32 words, two of a prefix cache's
	// 16-token blocks.
	SharedPrefixMinWords = 32
	// maxShapeTags is how many tags a shape lists.
	maxShapeTags = 5
)

// Stats summarises what reqs ask of a server (result.WorkloadShape: its
// fields say how each figure is computed), for `perfgate workload stats`
// and each scenario of a result. Prompt lengths are in words
// (strings.Fields over the prompt, or over a chat request's messages'
// contents in order, as perfgate's simulator counts tokens). It is pure and
// deterministic, and takes O(W·log n) time for n requests of W words in
// all, and O(n) memory beyond the requests: words are read from the
// requests' text in place, never copied.
func Stats(reqs []Request) result.WorkloadShape {
	s := result.WorkloadShape{Requests: len(reqs)}
	words := make([]int, len(reqs))
	maxTokens := make([]int, len(reqs))
	tags := map[string]int{}
	sampling := map[string]int{}
	for i := range reqs {
		r := &reqs[i]
		if r.Messages != nil {
			s.Chat++
		} else {
			s.Completions++
		}
		words[i] = promptOf(r).count()
		maxTokens[i] = r.MaxTokens
		for _, t := range distinct(r.Tags) {
			tags[t]++
		}
		for _, p := range []struct {
			name string
			set  bool
		}{
			{"temperature", r.Temperature != nil}, {"top_p", r.TopP != nil}, {"seed", r.Seed != nil},
			{"ignore_eos", r.IgnoreEOS != nil}, {"min_tokens", r.MinTokens != nil},
		} {
			if p.set {
				sampling[p.name]++
			}
		}
		if len(r.ResponseFormat) > 0 {
			s.ResponseFormat++
		}
		if len(r.Tools) > 0 {
			s.Tools++
		}
	}
	s.PromptWords = lengths(words)
	s.MaxTokens = lengths(maxTokens)
	shared := sharedPrefixes(reqs)
	s.PrefixSharing = prefixSharing(reqs, words, shared)
	s.Sessions = sessionShape(reqs, words, shared)
	s.Arrivals = arrivalShape(reqs)
	s.Tags, s.DistinctTags = topTags(tags)
	if len(sampling) > 0 {
		s.Sampling = sampling
	}
	return s
}

// distinct is tags without repeats, so that a request counts once a tag.
func distinct(tags []string) []string {
	if len(tags) < 2 {
		return tags
	}
	out := slices.Clone(tags)
	slices.Sort(out)
	return slices.Compact(out)
}

// lengths is the nearest-rank p50, p90, p99 and max of xs (which it sorts).
func lengths(xs []int) result.Lengths {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return result.Lengths{P50: rank(xs, 50), P90: rank(xs, 90), P99: rank(xs, 99), Max: rank(xs, 100)}
}

// rank is the nearest-rank p-th percentile of sorted: its element at rank
// ⌈p·n/100⌉ (1-based); the zero value when sorted is empty.
func rank[T any](sorted []T, p int) T {
	var zero T
	n := len(sorted)
	if n == 0 {
		return zero
	}
	k := (p*n + 99) / 100 // ⌈p·n/100⌉ in integers
	return sorted[max(k, 1)-1]
}

// topTags lists the most frequent tags, most first then by name, and the
// number of distinct tags.
func topTags(counts map[string]int) ([]result.TagCount, int) {
	if len(counts) == 0 {
		return nil, 0
	}
	all := make([]result.TagCount, 0, len(counts))
	for t, n := range counts {
		all = append(all, result.TagCount{Tag: t, Requests: n})
	}
	slices.SortFunc(all, func(a, b result.TagCount) int {
		return cmp.Or(cmp.Compare(b.Requests, a.Requests), strings.Compare(a.Tag, b.Tag))
	})
	return all[:min(len(all), maxShapeTags)], len(all)
}

// prefixSharing totals the words and the shared words of every request.
func prefixSharing(reqs []Request, words, shared []int) result.PrefixSharing {
	var p result.PrefixSharing
	seen := map[uint64]bool{}
	for i := range reqs {
		p.Words += words[i]
		p.SharedWords += shared[i]
		if shared[i] >= SharedPrefixMinWords {
			seen[promptOf(&reqs[i]).hash(shared[i])] = true
		}
	}
	p.Ratio = ratio(p.SharedWords, p.Words)
	p.Prefixes32 = len(seen)
	return p
}

// ratio is a / b, 0 when b is 0.
func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// sharedPrefixes returns, for each request in file order, the length in
// words of the longest prefix of its prompt that some earlier request's
// prompt also begins with.
//
// The requests are sorted by their word sequences (sortPrompts); among the
// requests before i in file order, the one sharing the longest prefix with
// i is a neighbour of i in that order, since a common prefix with a request
// further away is also one with every request in between. Removing the
// requests from a list in sorted order, last in file order first, leaves
// i's neighbours in the list the nearest earlier requests on each side when
// i is removed, and the common prefix of two requests that become
// neighbours is the shorter of the two links it replaces. So after the sort
// the pass is O(n).
func sharedPrefixes(reqs []Request) []int {
	n := len(reqs)
	shared := make([]int, n)
	if n < 2 {
		return shared
	}
	order, lcp := sortPrompts(reqs)
	// prev and next link the requests in sorted order (-1 ends the list);
	// common[x] is the words x has in common with next[x].
	prev, next, common := make([]int, n), make([]int, n), make([]int, n)
	for k, i := range order {
		prev[i], next[i] = -1, -1
		if k > 0 {
			prev[i] = order[k-1]
		}
		if k+1 < n {
			next[i], common[i] = order[k+1], lcp[k]
		}
	}
	for i := n - 1; i >= 0; i-- {
		p, q := prev[i], next[i]
		shared[i] = common[i]
		if p >= 0 {
			shared[i] = max(shared[i], common[p])
			common[p] = min(common[p], common[i])
			next[p] = q
		}
		if q >= 0 {
			prev[q] = p
		}
	}
	return shared
}

// sortPrompts orders the requests by their prompts' word sequences (a
// prompt that another begins with first; equal prompts in file order), and
// returns that order and lcp, where lcp[k] is the number of words the k-th
// and (k+1)-th prompts have in common.
//
// It sorts word by word, as a radix sort does: the requests by their first
// word, then each group with the same first word by its second, and so on,
// each cursor reading its prompt's words once. A request is sorted once at
// each depth up to the prefix it shares, so the cost is O((W + n)·log n)
// word comparisons for W words in all, however long the shared prefixes.
func sortPrompts(reqs []Request) (order, lcp []int) {
	n := len(reqs)
	type cursor struct {
		it   *wordIter
		word string
		more bool // false past the last word
	}
	curs := make([]cursor, n)
	order = make([]int, n)
	for i := range reqs {
		curs[i].it = promptOf(&reqs[i]).words()
		curs[i].word, curs[i].more = curs[i].it.next()
		order[i] = i
	}
	same := func(a, b int) bool {
		return curs[a].more == curs[b].more && curs[a].word == curs[b].word
	}
	lcp = make([]int, max(n-1, 0))
	type group struct{ lo, hi, depth int }
	stack := []group{{0, n, 0}}
	for len(stack) > 0 {
		g := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		// A group whose words are all the same (a shared prefix) needs no sort.
		all := true
		for k := g.lo + 1; k < g.hi && all; k++ {
			all = same(order[g.lo], order[k])
		}
		if all && !curs[order[g.lo]].more {
			for k := g.lo; k < g.hi-1; k++ {
				lcp[k] = g.depth // equal prompts, all g.depth words
			}
			continue
		}
		if all {
			for _, i := range order[g.lo:g.hi] {
				curs[i].word, curs[i].more = curs[i].it.next()
			}
			stack = append(stack, group{g.lo, g.hi, g.depth + 1})
			continue
		}
		slices.SortStableFunc(order[g.lo:g.hi], func(a, b int) int {
			ca, cb := &curs[a], &curs[b]
			if !ca.more || !cb.more {
				return cmp.Compare(boolInt(ca.more), boolInt(cb.more))
			}
			return strings.Compare(ca.word, cb.word)
		})
		for s := g.lo; s < g.hi; {
			e := s + 1
			for e < g.hi && same(order[s], order[e]) {
				e++
			}
			if e < g.hi {
				lcp[e-1] = g.depth // runs that differ at this word
			}
			if !curs[order[s]].more {
				for k := s; k < e-1; k++ {
					lcp[k] = g.depth // equal prompts, all g.depth words
				}
			} else if e-s > 1 {
				for _, i := range order[s:e] {
					curs[i].word, curs[i].more = curs[i].it.next()
				}
				stack = append(stack, group{s, e, g.depth + 1})
			}
			s = e
		}
	}
	return order, lcp
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sessionShape describes the sessions of reqs; nil when there are none.
// words and shared are each request's prompt words and shared words.
func sessionShape(reqs []Request, words, shared []int) *result.SessionShape {
	turns := map[string]int{}
	var order []string
	for i := range reqs {
		if id := reqs[i].SessionID; id != "" {
			if turns[id] == 0 {
				order = append(order, id)
			}
			turns[id]++
		}
	}
	if len(order) == 0 {
		return nil
	}
	s := &result.SessionShape{Count: len(order)}
	counts := make([]int, 0, len(order))
	for _, id := range order {
		counts = append(counts, turns[id])
		s.Requests += turns[id]
	}
	slices.Sort(counts)
	s.TurnsMin, s.TurnsP50, s.TurnsMax = counts[0], rank(counts, 50), counts[len(counts)-1]

	// Think times, and the words each later turn carries: the words of its
	// session's earlier turns (turns are 1..n, in any file order).
	var think []float64
	byTurn := map[string][]int{} // session → words of turn k at index k−1
	for _, id := range order {
		byTurn[id] = make([]int, turns[id])
	}
	for i := range reqs {
		r := &reqs[i]
		if r.SessionID == "" {
			continue
		}
		if r.ThinkMS != nil {
			think = append(think, *r.ThinkMS)
		}
		if t := r.Turn; t >= 1 && t <= len(byTurn[r.SessionID]) {
			byTurn[r.SessionID][t-1] = words[i]
		}
	}
	if len(think) > 0 {
		slices.Sort(think)
		s.ThinkMS = &result.ThinkShape{Count: len(think), P50: rank(think, 50), P90: rank(think, 90)}
	}
	var total, sharedTotal int
	for i := range reqs {
		r := &reqs[i]
		if r.SessionID == "" || r.Turn < 2 {
			total += words[i]
			sharedTotal += shared[i]
			continue
		}
		carried := 0
		for _, w := range byTurn[r.SessionID][:min(r.Turn-1, len(byTurn[r.SessionID]))] {
			carried += w
		}
		total += carried + words[i]
		sharedTotal += carried
	}
	s.PrefixSharingWithHistory = ratio(sharedTotal, total)
	return s
}

// arrivalShape describes the arrival times of reqs; nil when no request
// has one.
func arrivalShape(reqs []Request) *result.ArrivalShape {
	var at []float64
	for i := range reqs {
		if a := reqs[i].ArrivalMS; a != nil {
			at = append(at, *a)
		}
	}
	if len(at) == 0 {
		return nil
	}
	slices.Sort(at)
	a := &result.ArrivalShape{Requests: len(at)}
	span := at[len(at)-1] - at[0]
	a.Span = result.Seconds(span / 1000)
	if span > 0 {
		a.MeanRate = float64(len(at)-1) / (span / 1000)
		if gaps := len(at) - 1; gaps >= 2 {
			mean := span / float64(gaps)
			var ss float64
			for k := 1; k < len(at); k++ {
				d := at[k] - at[k-1] - mean
				ss += d * d
			}
			a.Burstiness = math.Sqrt(ss/float64(gaps)) / mean
		}
	}
	// The busiest window [at[lo], at[lo]+1000 ms): two pointers.
	hi := 0
	for lo := range at {
		for hi < len(at) && at[hi] < at[lo]+1000 {
			hi++
		}
		a.PeakPerSecond = max(a.PeakPerSecond, hi-lo)
	}
	return a
}

// prompt is a request's prompt text: the prompt, or the contents of its
// messages in order. Its words are read in place, never copied.
type prompt struct {
	single string    // a completions prompt
	msgs   []Message // a chat request's messages
}

func promptOf(r *Request) prompt {
	if r.Messages != nil {
		return prompt{msgs: r.Messages}
	}
	return prompt{single: r.Prompt}
}

// wordIter is an iterator over a prompt's words, as strings.Fields splits
// each part (message boundaries also separate words).
type wordIter struct {
	p    prompt
	part int    // index of the message being read (0 for a single prompt)
	rest string // unread text of the current part
}

func (p prompt) words() *wordIter {
	w := &wordIter{p: p}
	if p.msgs == nil {
		w.rest = p.single
	} else if len(p.msgs) > 0 {
		w.rest = p.msgs[0].Content
	}
	return w
}

// next returns the next word, or false at the end.
func (w *wordIter) next() (string, bool) {
	for {
		start := spaceEnd(w.rest, 0, true)
		if start < len(w.rest) {
			end := spaceEnd(w.rest, start, false)
			word := w.rest[start:end]
			w.rest = w.rest[end:]
			return word, true
		}
		if w.p.msgs == nil || w.part+1 >= len(w.p.msgs) {
			w.rest = ""
			return "", false
		}
		w.part++
		w.rest = w.p.msgs[w.part].Content
	}
}

// asciiSpace marks the ASCII bytes that unicode.IsSpace (and so
// strings.Fields) takes for white space.
var asciiSpace = [128]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// spaceEnd is the index of the first byte of s from i on that starts a
// rune which is white space (space false) or is not (space true); len(s)
// when there is none. ASCII bytes are looked up, the rest decoded.
func spaceEnd(s string, i int, space bool) int {
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiSpace[c] != space {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) != space {
			return i
		}
		i += size
	}
	return i
}

// count is the number of words in p: len(strings.Fields) of each part,
// summed, without building the list.
func (p prompt) count() int {
	if p.msgs == nil {
		return countWords(p.single)
	}
	n := 0
	for _, m := range p.msgs {
		n += countWords(m.Content)
	}
	return n
}

// countWords is len(strings.Fields(s)).
func countWords(s string) int {
	n := 0
	for i := spaceEnd(s, 0, true); i < len(s); i = spaceEnd(s, i, true) {
		n++
		i = spaceEnd(s, i, false)
	}
	return n
}

// hash is a 64-bit FNV-1a hash of p's first n words, each ended by a zero
// byte, to tell distinct prefixes apart.
func (p prompt) hash(n int) uint64 {
	h := fnv.New64a()
	w := p.words()
	for range n {
		word, ok := w.next()
		if !ok {
			break
		}
		h.Write([]byte(word))
		h.Write([]byte{0})
	}
	return h.Sum64()
}
