package quality

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/workload"
)

const arithmeticPath = "../../examples/evals/arithmetic.jsonl"

// TestArithmeticSuite checks that examples/evals/arithmetic.jsonl is what
// arithmeticSuite makes (go test -run TestArithmeticSuite -update rewrites
// it), and recomputes the answer of every expression item from its prompt.
func TestArithmeticSuite(t *testing.T) {
	want := arithmeticSuite()
	if *update {
		require.NoError(t, os.WriteFile(arithmeticPath, want, 0o644))
	}
	got, err := os.ReadFile(arithmeticPath)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got), "%s is not what arithmeticSuite makes; run go test ./internal/quality -run TestArithmeticSuite -update", arithmeticPath)

	s, err := Load(arithmeticPath)
	require.NoError(t, err)
	require.Len(t, s.Items, 200)
	words := 0
	for _, it := range s.Items {
		require.Equal(t, "numeric", it.Scorer)
		require.Len(t, it.Expected, 1)
		want, err := strconv.Atoi(it.Expected[0])
		require.NoError(t, err, "item %s", it.ID)
		if !strings.Contains(strings.Join(it.Request.Tags, ","), "expression") {
			words++
			continue
		}
		q := it.Request.Messages[0].Content
		expr, _, ok := strings.Cut(strings.TrimPrefix(q, "What is "), "?")
		require.True(t, ok, "item %s: no expression in %q", it.ID, q)
		got, err := evalExpr(expr)
		require.NoError(t, err, "item %s", it.ID)
		assert.Equal(t, want, got, "item %s: %s", it.ID, expr)
	}
	assert.Equal(t, 50, words, "word problems")
}

// evalExpr evaluates integer expressions with +, -, ×, parentheses and the
// usual precedence: an evaluator independent of the generator.
func evalExpr(s string) (int, error) {
	toks := strings.Fields(strings.NewReplacer("(", " ( ", ")", " ) ").Replace(s))
	pos := 0
	var sum, product, atom func() (int, error)
	atom = func() (int, error) {
		if pos >= len(toks) {
			return 0, fmt.Errorf("%q: unexpected end", s)
		}
		tok := toks[pos]
		pos++
		if tok == "(" {
			v, err := sum()
			if err != nil {
				return 0, err
			}
			if pos >= len(toks) || toks[pos] != ")" {
				return 0, fmt.Errorf("%q: missing )", s)
			}
			pos++
			return v, nil
		}
		return strconv.Atoi(tok)
	}
	product = func() (int, error) {
		v, err := atom()
		for err == nil && pos < len(toks) && toks[pos] == "×" {
			pos++
			var w int
			w, err = atom()
			v *= w
		}
		return v, err
	}
	sum = func() (int, error) {
		v, err := product()
		for err == nil && pos < len(toks) && (toks[pos] == "+" || toks[pos] == "-") {
			op := toks[pos]
			pos++
			var w int
			w, err = product()
			if op == "+" {
				v += w
			} else {
				v -= w
			}
		}
		return v, err
	}
	v, err := sum()
	if err == nil && pos != len(toks) {
		err = fmt.Errorf("%q: trailing %q", s, toks[pos])
	}
	return v, err
}

// splitmix is a fixed pseudo-random sequence (SplitMix64), so that the
// generated suite does not depend on the Go version's math/rand.
type splitmix uint64

func (r *splitmix) next() uint64 {
	*r += 0x9e3779b97f4a7c15
	z := uint64(*r)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// between returns an integer in [lo, hi].
func (r *splitmix) between(lo, hi int) int {
	return lo + int(r.next()%uint64(hi-lo+1))
}

const answerFormat = `Work it out step by step if you like, then give the final answer on the last line in the form "Answer: <number>".`

// arithmeticSuite makes examples/evals/arithmetic.jsonl: 200 items, every
// fourth a word problem with units, the others expressions mixing +, - and ×
// on small integers.
func arithmeticSuite() []byte {
	r := splitmix(20240601)
	var b bytes.Buffer
	for i := 1; i <= 200; i++ {
		var q string
		var answer int
		tags := []string{"arithmetic", "expression"}
		if i%4 == 0 {
			q, answer = wordProblem(&r)
			tags = []string{"arithmetic", "word"}
		} else {
			var expr string
			expr, answer = expression(&r)
			q = "What is " + expr + "?"
		}
		line := struct {
			ID       string             `json:"id"`
			Messages []workload.Message `json:"messages"`
			Scorer   string             `json:"scorer"`
			Expected int                `json:"expected"`
			Tags     []string           `json:"tags"`
		}{fmt.Sprintf("arith-%03d", i), []workload.Message{{Role: "user", Content: q + " " + answerFormat}}, "numeric", answer, tags}
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(line); err != nil {
			panic(err)
		}
	}
	return b.Bytes()
}

func expression(r *splitmix) (string, int) {
	switch r.between(0, 6) {
	case 0:
		a, b := r.between(10, 99), r.between(10, 99)
		return fmt.Sprintf("%d + %d", a, b), a + b
	case 1:
		a, b := r.between(1, 99), r.between(1, 99)
		return fmt.Sprintf("%d - %d", a, b), a - b
	case 2:
		a, b := r.between(2, 19), r.between(2, 12)
		return fmt.Sprintf("%d × %d", a, b), a * b
	case 3:
		a, b, c := r.between(1, 50), r.between(2, 12), r.between(2, 12)
		return fmt.Sprintf("%d + %d × %d", a, b, c), a + b*c
	case 4:
		a, b, c := r.between(2, 12), r.between(2, 12), r.between(1, 99)
		return fmt.Sprintf("%d × %d - %d", a, b, c), a*b - c
	case 5:
		a, b, c := r.between(1, 20), r.between(1, 20), r.between(2, 9)
		return fmt.Sprintf("(%d + %d) × %d", a, b, c), (a + b) * c
	default:
		a, b, c := r.between(1, 50), r.between(1, 50), r.between(1, 50)
		return fmt.Sprintf("%d - %d - %d", a, b, c), a - b - c
	}
}

func wordProblem(r *splitmix) (string, int) {
	switch r.between(0, 7) {
	case 0:
		a, b := r.between(30, 120), r.between(2, 9)
		return fmt.Sprintf("A train travels at a steady %d km per hour. How many kilometres does it travel in %d hours?", a, b), a * b
	case 1:
		a, b := r.between(5, 40), r.between(2, 30)
		c := r.between(1, a+b)
		return fmt.Sprintf("Maya has %d apples. She buys %d more and then gives %d to her neighbours. How many apples does she have left?", a, b, c), a + b - c
	case 2:
		a, b := r.between(2, 15), r.between(2, 20)
		return fmt.Sprintf("One notebook costs $%d. How many dollars do %d notebooks cost?", a, b), a * b
	case 3:
		a := r.between(50, 500)
		b, c := r.between(1, a-1), r.between(1, 100)
		return fmt.Sprintf("A water tank holds %d litres. %d litres leak out, and then %d litres are added. How many litres are in the tank now?", a, b, c), a - b + c
	case 4:
		b, c, left := r.between(2, 9), r.between(2, 15), r.between(1, 20)
		return fmt.Sprintf("A rope is %d metres long. %d pieces of %d metres each are cut from it. How many metres of rope are left?", b*c+left, b, c), left
	case 5:
		a, b := r.between(-5, 15), r.between(3, 25)
		return fmt.Sprintf("At noon the temperature is %d °C. By midnight it has fallen by %d °C. What is the temperature at midnight, in °C?", a, b), a - b
	case 6:
		a, b := r.between(6, 24), r.between(2, 12)
		c := r.between(1, a-1)
		return fmt.Sprintf("A box holds %d pencils. How many pencils are there in %d full boxes and %d loose pencils?", a, b, c), a*b + c
	default:
		a, b := r.between(1200, 9800), r.between(1200, 9800)
		return fmt.Sprintf("Ana runs %s metres on Monday and %s metres on Tuesday. How many metres does she run in total?", thousands(a), thousands(b)), a + b
	}
}

// thousands writes n with thousands commas, as in "1,250".
func thousands(n int) string {
	s := strconv.Itoa(n)
	if len(s) <= 3 {
		return s
	}
	return s[:len(s)-3] + "," + s[len(s)-3:]
}
