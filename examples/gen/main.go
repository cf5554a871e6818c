package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"

	"github.com/perfgate/perfgate/internal/workload"
)

func main() {
	if err := run(os.Stdout, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(2)
	}
}

func run(stdout io.Writer, args []string) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	kind := fs.String("kind", "chat", "which workload: chat, trace, sessions or agents")
	seed := fs.Uint64("seed", 1, "random seed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	reqs, err := generate(*kind, *seed)
	if err != nil {
		return err
	}
	return workload.Write(stdout, reqs)
}

func generate(kind string, seed uint64) ([]workload.Request, error) {
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
	switch kind {
	case "chat":
		return g.chat(), nil
	case "trace":
		return g.trace(), nil
	case "sessions":
		return g.sessions(), nil
	case "agents":
		return g.agents(), nil
	}
	return nil, fmt.Errorf("unknown -kind %q; want chat, trace, sessions or agents", kind)
}

// Kinds, used as ids' prefixes and as tags.
const (
	kindShort = "short"
	kindDoc   = "summarise"
	kindCode  = "code"
	kindConv  = "multiturn"
)

type gen struct {
	r *rand.Rand
}

// chat makes the chat workload: the four kinds, interleaved in a random order.
func (g *gen) chat() []workload.Request {
	var reqs []workload.Request
	for i := range 150 {
		reqs = append(reqs, g.shortRequest(fmt.Sprintf("short-%03d", i+1)))
	}
	for i := range 60 {
		reqs = append(reqs, g.docRequest(fmt.Sprintf("doc-%03d", i+1), 600, 2500))
	}
	for i := range 70 {
		reqs = append(reqs, g.codeRequest(fmt.Sprintf("code-%03d", i+1), 80, 600))
	}
	for i := range 20 {
		reqs = append(reqs, g.convRequest(fmt.Sprintf("conv-%03d", i+1)))
	}
	g.r.Shuffle(len(reqs), func(i, j int) { reqs[i], reqs[j] = reqs[j], reqs[i] })
	return reqs
}

// trace makes the trace workload: short questions and short code and document
// tasks, arriving in bursts. Burst starts are a Poisson process (mean gap 3 s);
// a burst holds 1-20 requests (geometric, mean about 6) spaced by exponential
// gaps of mean 40 ms.
func (g *gen) trace() []workload.Request {
	const n = 200
	var reqs []workload.Request
	t := 0.0
	for len(reqs) < n {
		size := 1
		for size < 20 && g.r.Float64() < 0.83 {
			size++
		}
		for k := 0; k < size && len(reqs) < n; k++ {
			id := fmt.Sprintf("t-%04d", len(reqs)+1)
			var req workload.Request
			switch u := g.r.Float64(); {
			case u < 0.6:
				req = g.shortRequest(id)
			case u < 0.8:
				req = g.codeRequest(id, 80, 250)
			default:
				req = g.docRequest(id, 200, 500)
			}
			at := math.Round(t*10) / 10
			req.ArrivalMS = &at
			reqs = append(reqs, req)
			t += g.r.ExpFloat64() * 40
		}
		t += g.r.ExpFloat64() * 3000
	}
	return reqs
}

func user(content string) workload.Message { return workload.Message{Role: "user", Content: content} }

// pick returns a random element of list.
func pick[T any](r *rand.Rand, list []T) T { return list[r.IntN(len(list))] }

// between returns a random int in [lo, hi].
func between(r *rand.Rand, lo, hi int) int { return lo + r.IntN(hi-lo+1) }

func words(s string) int { return len(strings.Fields(s)) }

// slotRE matches a {slot} placeholder; other braces (code) are left alone.
var slotRE = regexp.MustCompile(`\{[a-z0-9]+\}`)

// fill replaces each {slot} in tmpl with a random value of that slot, left to
// right. An unknown slot is a bug in the templates and panics.
func (g *gen) fill(tmpl string) string {
	return slotRE.ReplaceAllStringFunc(tmpl, func(m string) string { return g.slot(m[1 : len(m)-1]) })
}

func (g *gen) slot(name string) string {
	switch name {
	case "n":
		return fmt.Sprint(between(g.r, 2, 9))
	case "num":
		return fmt.Sprint(between(g.r, 12, 480))
	case "big":
		return fmt.Sprintf("%d,%03d", between(g.r, 1, 90), between(g.r, 0, 999))
	case "pct":
		return fmt.Sprintf("%d%%", between(g.r, 2, 97))
	case "ms":
		return fmt.Sprintf("%d ms", between(g.r, 3, 60)*10)
	case "time":
		return fmt.Sprintf("%02d:%02d", between(g.r, 0, 23), between(g.r, 0, 11)*5)
	case "minutes":
		return fmt.Sprint(between(g.r, 4, 95))
	case "version":
		return fmt.Sprintf("%d.%d.%d", between(g.r, 1, 4), between(g.r, 0, 19), between(g.r, 0, 9))
	case "money":
		return fmt.Sprintf("$%d,%03d", between(g.r, 2, 900), between(g.r, 0, 99)*10)
	}
	vals, ok := slots[name]
	if !ok {
		panic("gen: unknown slot {" + name + "}")
	}
	return pick(g.r, vals)
}
