package main

import (
	"math"
	"strings"

	"github.com/perfgate/perfgate/internal/workload"
)

var goSnippets = []string{
	`// retry calls fn until it succeeds or attempts run out.
func retry(ctx context.Context, attempts int, fn func() error) error {
	var err error
	for i := 0; i < attempts; i++ {
		if err = fn(); err == nil {
			return nil
		}
		time.Sleep(time.Duration(i*100) * time.Millisecond)
	}
	return err
}`,
	`type Cache struct {
	items map[string]entry
}

type entry struct {
	value   []byte
	expires time.Time
}

func (c *Cache) Get(key string) ([]byte, bool) {
	e, ok := c.items[key]
	if !ok || time.Now().After(e.expires) {
		return nil, false
	}
	return e.value, true
}

func (c *Cache) Set(key string, value []byte, ttl time.Duration) {
	c.items[key] = entry{value: value, expires: time.Now().Add(ttl)}
}`,
	`func handleUpload(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), 500)
	}
	var meta UploadMeta
	json.Unmarshal(body, &meta)
	path := filepath.Join("/srv/uploads", meta.Name)
	if err := os.WriteFile(path, body, 0644); err != nil {
		http.Error(w, "write failed", 500)
		return
	}
	fmt.Fprintf(w, "stored %d bytes at %s", len(body), path)
}`,
	`// mergeSorted merges two sorted slices into one sorted slice.
func mergeSorted(a, b []int) []int {
	out := make([]int, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if a[i] <= b[j] {
			out = append(out, a[i])
			i++
		} else {
			out = append(out, b[j])
			j++
		}
	}
	out = append(out, a[i:]...)
	return out
}`,
	`func worker(id int, jobs <-chan Job, results chan<- Result, wg *sync.WaitGroup) {
	defer wg.Done()
	for j := range jobs {
		start := time.Now()
		out, err := j.Run()
		results <- Result{JobID: j.ID, Output: out, Err: err, Took: time.Since(start)}
	}
}

func runAll(jobs []Job, n int) []Result {
	in := make(chan Job)
	out := make(chan Result)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go worker(i, in, out, &wg)
	}
	for _, j := range jobs {
		in <- j
	}
	close(in)
	wg.Wait()
	close(out)
	var results []Result
	for r := range out {
		results = append(results, r)
	}
	return results
}`,
	`type Config struct {
	Addr         string        ` + "`yaml:\"addr\"`" + `
	ReadTimeout  time.Duration ` + "`yaml:\"read_timeout\"`" + `
	MaxBodyBytes int64         ` + "`yaml:\"max_body_bytes\"`" + `
	Replicas     []string      ` + "`yaml:\"replicas\"`" + `
}

func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	var c Config
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("parse config %s: %w", path, err)
	}
	if c.Addr == "" {
		c.Addr = ":8080"
	}
	return &c, nil
}`,
	`// Server wires the HTTP handlers of the orders API.
type Server struct {
	db     *sql.DB
	log    *slog.Logger
	mux    *http.ServeMux
	limits map[string]int
}

func NewServer(db *sql.DB, log *slog.Logger) *Server {
	s := &Server{db: db, log: log, mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /orders/{id}", s.getOrder)
	s.mux.HandleFunc("POST /orders", s.createOrder)
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
	})
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &statusRecorder{ResponseWriter: w, status: 200}
	s.mux.ServeHTTP(rec, r)
	s.log.Info("request", "method", r.Method, "path", r.URL.Path,
		"status", rec.status, "took", time.Since(start))
}

func (s *Server) getOrder(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	row := s.db.QueryRow("SELECT id, customer_id, total, status FROM orders WHERE id = " + id)
	var o Order
	if err := row.Scan(&o.ID, &o.CustomerID, &o.Total, &o.Status); err != nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	json.NewEncoder(w).Encode(o)
}

func (s *Server) createOrder(w http.ResponseWriter, r *http.Request) {
	var o Order
	if err := json.NewDecoder(r.Body).Decode(&o); err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if s.limits[o.CustomerID] > 0 && o.Total > s.limits[o.CustomerID] {
		http.Error(w, "over limit", http.StatusForbidden)
		return
	}
	_, err := s.db.Exec("INSERT INTO orders (customer_id, total, status) VALUES ($1, $2, 'new')",
		o.CustomerID, o.Total)
	if err != nil {
		s.log.Error("insert order", "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusCreated)
}`,
	`// Tokenize splits an arithmetic expression such as "3 + 4 * (2 - 1)" into tokens.
func Tokenize(expr string) ([]Token, error) {
	var toks []Token
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == ' ':
			i++
		case c >= '0' && c <= '9':
			j := i
			for j < len(expr) && expr[j] >= '0' && expr[j] <= '9' {
				j++
			}
			n, _ := strconv.Atoi(expr[i:j])
			toks = append(toks, Token{Kind: Number, Value: n})
			i = j
		case strings.ContainsRune("+-*/()", rune(c)):
			toks = append(toks, Token{Kind: Op, Op: c})
			i++
		default:
			return nil, fmt.Errorf("unexpected character %q at %d", c, i)
		}
	}
	return toks, nil
}

// Eval evaluates tokens with the usual precedence, using two stacks.
func Eval(toks []Token) (int, error) {
	var nums []int
	var ops []byte
	apply := func() {
		b, a := nums[len(nums)-1], nums[len(nums)-2]
		nums = nums[:len(nums)-2]
		op := ops[len(ops)-1]
		ops = ops[:len(ops)-1]
		switch op {
		case '+':
			nums = append(nums, a+b)
		case '-':
			nums = append(nums, a-b)
		case '*':
			nums = append(nums, a*b)
		case '/':
			nums = append(nums, a/b)
		}
	}
	for _, t := range toks {
		switch {
		case t.Kind == Number:
			nums = append(nums, t.Value)
		case t.Op == '(':
			ops = append(ops, '(')
		case t.Op == ')':
			for ops[len(ops)-1] != '(' {
				apply()
			}
			ops = ops[:len(ops)-1]
		default:
			for len(ops) > 0 && prec(ops[len(ops)-1]) >= prec(t.Op) {
				apply()
			}
			ops = append(ops, t.Op)
		}
	}
	for len(ops) > 0 {
		apply()
	}
	return nums[0], nil
}`,
}

var pythonSnippets = []string{
	`def parse_log_line(line):
    parts = line.split(" ")
    ts = parts[0] + " " + parts[1]
    level = parts[2].strip("[]")
    message = " ".join(parts[3:])
    return {"ts": ts, "level": level, "message": message}


def count_errors(path):
    counts = {}
    for line in open(path):
        entry = parse_log_line(line)
        if entry["level"] == "ERROR":
            counts[entry["message"]] = counts.get(entry["message"], 0) + 1
    return sorted(counts.items(), key=lambda kv: kv[1], reverse=True)`,
	`class RateLimiter:
    def __init__(self, rate, burst):
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.last = time.monotonic()

    def allow(self):
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.last) * self.rate)
        self.last = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False`,
	`def fetch_all(urls, timeout=5):
    results = []
    for url in urls:
        try:
            resp = requests.get(url, timeout=timeout)
            results.append((url, resp.status_code, len(resp.content)))
        except Exception:
            pass
    return results`,
	`import pandas as pd

def monthly_revenue(orders_csv):
    df = pd.read_csv(orders_csv, parse_dates=["created_at"])
    df = df[df["status"] == "paid"]
    df["month"] = df["created_at"].dt.to_period("M")
    summary = df.groupby(["month", "country"])["amount"].sum().reset_index()
    summary["share"] = summary["amount"] / summary.groupby("month")["amount"].transform("sum")
    return summary.sort_values(["month", "amount"], ascending=[True, False])`,
	`def moving_average(values, window):
    out = []
    for i in range(len(values)):
        chunk = values[i - window:i]
        out.append(sum(chunk) / window)
    return out


def detect_spikes(values, window=12, factor=3.0):
    avg = moving_average(values, window)
    return [i for i, (v, a) in enumerate(zip(values, avg)) if a and v > factor * a]`,
	`import csv
import logging
from dataclasses import dataclass
from datetime import datetime

log = logging.getLogger(__name__)


@dataclass
class Row:
    sku: str
    name: str
    price_cents: int
    stock: int
    updated: datetime


class ImportError(Exception):
    pass


class CatalogImporter:
    required = ["sku", "name", "price", "stock", "updated"]

    def __init__(self, db, dry_run=False):
        self.db = db
        self.dry_run = dry_run
        self.seen = set()
        self.errors = []

    def parse(self, record, lineno):
        for field in self.required:
            if not record.get(field):
                raise ImportError(f"line {lineno}: missing {field}")
        price = float(record["price"].replace(",", "."))
        return Row(
            sku=record["sku"].strip(),
            name=record["name"].strip(),
            price_cents=int(price * 100),
            stock=int(record["stock"]),
            updated=datetime.strptime(record["updated"], "%Y-%m-%d"),
        )

    def run(self, path):
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            for lineno, record in enumerate(reader, start=2):
                try:
                    row = self.parse(record, lineno)
                except (ImportError, ValueError) as e:
                    self.errors.append(str(e))
                    continue
                if row.sku in self.seen:
                    log.warning("duplicate sku %s on line %d", row.sku, lineno)
                self.seen.add(row.sku)
                if not self.dry_run:
                    self.db.upsert("products", row.__dict__, key="sku")
        log.info("imported %d rows with %d errors", len(self.seen), len(self.errors))
        return len(self.errors) == 0`,
}

var sqlSnippets = []string{
	`SELECT c.id, c.name, COUNT(o.id) AS orders, SUM(o.total) AS revenue
FROM customers c
LEFT JOIN orders o ON o.customer_id = c.id
WHERE o.created_at >= '2024-01-01'
GROUP BY c.id, c.name
ORDER BY revenue DESC
LIMIT 20;`,
	`CREATE TABLE events (
    id          BIGSERIAL PRIMARY KEY,
    account_id  BIGINT NOT NULL,
    kind        TEXT NOT NULL,
    payload     JSONB,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

SELECT kind, COUNT(*)
FROM events
WHERE account_id = 42
  AND created_at > now() - interval '7 days'
  AND payload->>'source' = 'mobile'
GROUP BY kind;`,
	`UPDATE subscriptions
SET status = 'expired'
WHERE id IN (
    SELECT s.id
    FROM subscriptions s
    JOIN accounts a ON a.id = s.account_id
    WHERE s.renews_at < now()
      AND s.status = 'active'
      AND a.region = 'eu-west'
);`,
	`WITH daily AS (
    SELECT date_trunc('day', created_at) AS day, SUM(amount) AS total
    FROM payments
    WHERE status = 'settled'
    GROUP BY 1
)
SELECT day,
       total,
       AVG(total) OVER (ORDER BY day ROWS BETWEEN 6 PRECEDING AND CURRENT ROW) AS week_avg
FROM daily
ORDER BY day;`,
	`-- Migration 0042: split addresses out of customers.
BEGIN;

CREATE TABLE addresses (
    id           BIGSERIAL PRIMARY KEY,
    customer_id  BIGINT NOT NULL REFERENCES customers(id),
    kind         TEXT NOT NULL CHECK (kind IN ('billing', 'shipping')),
    line1        TEXT NOT NULL,
    line2        TEXT,
    city         TEXT NOT NULL,
    postcode     TEXT NOT NULL,
    country      CHAR(2) NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);

INSERT INTO addresses (customer_id, kind, line1, line2, city, postcode, country)
SELECT id, 'billing', billing_line1, billing_line2, billing_city, billing_postcode, billing_country
FROM customers
WHERE billing_line1 IS NOT NULL;

INSERT INTO addresses (customer_id, kind, line1, line2, city, postcode, country)
SELECT id, 'shipping', shipping_line1, shipping_line2, shipping_city, shipping_postcode, shipping_country
FROM customers
WHERE shipping_line1 IS NOT NULL;

ALTER TABLE customers
    DROP COLUMN billing_line1, DROP COLUMN billing_line2, DROP COLUMN billing_city,
    DROP COLUMN billing_postcode, DROP COLUMN billing_country,
    DROP COLUMN shipping_line1, DROP COLUMN shipping_line2, DROP COLUMN shipping_city,
    DROP COLUMN shipping_postcode, DROP COLUMN shipping_country;

COMMIT;`,
}

var codeInstructions = map[string][]string{
	"go": {
		"Review this Go code and point out bugs, race conditions and unhandled errors.",
		"Write table-driven tests for the following Go code.",
		"Refactor this Go code to be more idiomatic, and explain each change briefly.",
		"Explain what this Go code does, line by line, for a new team member.",
		"This Go code is part of {service}. Add context cancellation and proper error wrapping.",
		"Is this Go code safe to call from several goroutines at once? If not, fix it.",
	},
	"python": {
		"Find the bugs in this Python code and show a corrected version.",
		"Add type hints and docstrings to the following Python code.",
		"Rewrite this Python code in Go, keeping the behaviour the same.",
		"Write pytest tests for this Python code, including edge cases.",
		"This Python code is slow on large inputs. Explain why and make it faster.",
	},
	"sql": {
		"Explain what this SQL does and suggest indexes that would speed it up.",
		"Rewrite this SQL query to be easier to read, and check it for mistakes.",
		"This query runs against PostgreSQL and takes {minutes} seconds. How would you optimise it?",
		"Convert this SQL into an equivalent query using a CTE, and explain the difference.",
	},
}

var codeContexts = []string{
	"We run this in production on the {team} team and it handles about {big} requests an hour.",
	"This was written in a hurry before a deadline and nobody has looked at it since.",
	"A colleague wrote this and I need to review it before {day}.",
	"We saw intermittent failures from this code during the incident in {month}.",
	"The code below is simplified; the real version has more fields, but the shape is the same.",
	"Our style guide prefers small functions and clear names.",
	"Please keep the public API unchanged, because other services depend on it.",
	"Performance matters here: this runs inside a hot loop.",
}

var codeMaxTokens = []int{200, 256, 300, 384, 400, 512, 600}

// codeRequest builds a code task of lo-hi words: an instruction, maybe some
// context, and one or more snippets of one language, added until a length
// drawn from [lo, hi] (leaning short) is reached.
func (g *gen) codeRequest(id string, lo, hi int) workload.Request {
	for {
		var lang string
		var pool []string
		switch u := g.r.Float64(); {
		case u < 0.45:
			lang, pool = "go", goSnippets
		case u < 0.8:
			lang, pool = "python", pythonSnippets
		default:
			lang, pool = "sql", sqlSnippets
		}
		target := lo + int(float64(hi-lo)*math.Pow(g.r.Float64(), 1.4))
		var b strings.Builder
		b.WriteString(g.fill(pick(g.r, codeInstructions[lang])))
		if g.r.Float64() < 0.5 {
			b.WriteString(" " + g.fill(pick(g.r, codeContexts)))
		}
		for _, i := range g.r.Perm(len(pool)) {
			b.WriteString("\n\n```" + lang + "\n" + pool[i] + "\n```")
			if words(b.String()) >= target {
				break
			}
		}
		content := b.String()
		if n := words(content); n >= lo && n <= hi {
			return workload.Request{
				ID:        id,
				Messages:  []workload.Message{user(content)},
				MaxTokens: pick(g.r, codeMaxTokens),
				Tags:      []string{kindCode, lang},
			}
		}
	}
}
