// Command decide measures whether perfgate's example configs decide on the
// simulator: for each config (the README's perfgate.yaml example and every
// examples/*.yaml that gates), how often an A/A comparison passes (exit 0)
// and how often a candidate made 1.3x slower (perfgate sim --slowdown 1.3)
// is a regression (exit 1); and how long warm-up takes at Poisson 2 req/s
// over examples/workloads/chat.jsonl.
//
// Each config runs as a generated copy: its scenarios, load types, gates and
// repetitions as they are, with requests cut (-requests; a scenario that
// gives a duration gets the request count instead, so that every repetition
// sends the same requests on the same schedule, as a long one would) and a
// short warm-up (windows of 1s, at most 5s, warn when not steady), so that
// a run takes about a minute or less. The server is always a
// simulator perfgate starts (a process stack): a config's own simulator
// command keeps its flags, with a port of the bench's own, --seed set per
// run and --truth left out; a config that measures an external server (the
// README's, examples/perfgate.yaml) gets `perfgate sim --step-base 4ms
// --per-prefill-token 20us`: a third of the default step, so that a
// repetition is short, and four times the demo's, so that the client's
// timing noise on a busy machine (a millisecond or two) is small beside a
// token's time.
//
// Per config it measures N+1 runs of the simulator as it is (seeds 0..N)
// and N of the slower one (seeds 1..N), with `perfgate run`, and then
// decides offline as `perfgate gate` would (internal/gate: the baseline
// promoted, the looks of a sequential gate replayed on the candidate's
// repetitions, the verdict at the last): try s compares run s (A/A) and
// slow run s (1.3x) with run s−1 as the baseline. A/A passes when the
// verdict is a pass (gate's exit 0); the slowdown is found when it is a
// regression (exit 1 for a regression, not an inconclusive gate).
//
// Capacity configs (examples/capacity*.yaml) are skipped: their sweep points
// have no gates, and their capacity gate's own benchmark is
// CapacityRegression (bench/capacity_test.go). demo-slower.yaml is
// demo.yaml's candidate and is not a config of its own.
//
//	go build -o bin/perfgate ./cmd/perfgate
//	go run ./bench/decide -n 40 -warmup-seeds 20             # the full measurement
//	go run ./bench/decide -n 3 -configs readme,demo -warmup-seeds 0
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/perfgate/perfgate/internal/baseline"
	"github.com/perfgate/perfgate/internal/compare/stat"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/run"
)

type options struct {
	n           int
	configs     string
	out         string
	perfgate    string
	slowdown    float64
	requests    int
	warmupSeeds int
	parallel    int
	root        string
}

func main() {
	var o options
	flag.IntVar(&o.n, "n", 40, "tries per config (A/A and slowdown each)")
	flag.StringVar(&o.configs, "configs", "all", "comma-separated: readme and the names of examples/*.yaml without .yaml (demo, perfgate, ...), or all, or none")
	flag.StringVar(&o.out, "out", "demo-out/decide", "directory for the generated configs, results and logs")
	flag.StringVar(&o.perfgate, "perfgate", "bin/perfgate", "the perfgate binary (go build -o bin/perfgate ./cmd/perfgate)")
	flag.Float64Var(&o.slowdown, "slowdown", 1.3, "the slower candidate's --slowdown")
	flag.IntVar(&o.requests, "requests", 24, "requests per repetition at most (a scenario's own, if fewer; replaces a duration)")
	flag.IntVar(&o.warmupSeeds, "warmup-seeds", 20, "seeds of the warm-up measurement at Poisson 2 req/s (0 skips it)")
	flag.IntVar(&o.parallel, "parallel", 1, "runs measured at once (a run mostly waits on the simulator's clock: a few at once cost little CPU, but each adds timing noise on a small machine)")
	flag.Parse()
	if err := mainErr(o); err != nil {
		fmt.Fprintln(os.Stderr, "decide:", err)
		os.Exit(1)
	}
}

func mainErr(o options) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	o.root = root
	if !filepath.IsAbs(o.perfgate) {
		o.perfgate = filepath.Join(root, o.perfgate)
	}
	if _, err := os.Stat(o.perfgate); err != nil {
		return fmt.Errorf("%w: build it with go build -o bin/perfgate ./cmd/perfgate", err)
	}
	o.out, err = filepath.Abs(o.out)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	names, err := configNames(root, o.configs)
	if err != nil {
		return err
	}
	type row struct {
		name               string
		aaPass, slowReg, n int
		perRun             time.Duration
		aaOther, slowOther []string
	}
	var rows []row
	for _, name := range names {
		src, err := loadSource(root, name)
		if err != nil {
			return err
		}
		dir := filepath.Join(o.out, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		var (
			mu      sync.Mutex
			runs    int
			runTime time.Duration
		)
		failed := map[string]error{} // runs that exited non-zero, by file
		measure := func(seed int, slowdown float64) (string, error) {
			tag := "aa"
			if slowdown != 1 {
				tag = "slow"
			}
			mu.Lock()
			ferr := failed[fmt.Sprintf("%s-%d", tag, seed)]
			mu.Unlock()
			if ferr != nil {
				return "", ferr
			}
			file := filepath.Join(dir, fmt.Sprintf("%s-%d.json", tag, seed))
			if _, err := os.Stat(file); err == nil {
				return file, nil // kept from an earlier invocation
			}
			conf, err := o.generate(src, dir, fmt.Sprintf("%s-%d", tag, seed), seed, slowdown)
			if err != nil {
				return "", err
			}
			t0 := time.Now()
			if err := o.perfgateRun(conf, file, filepath.Join(dir, tag+"-"+strconv.Itoa(seed)+".log")); err != nil {
				// A run that fails (exit 3: an overloaded or failing
				// server, say) is a try that did not decide, not the
				// end of the measurement.
				err = fmt.Errorf("%s %s seed %d: %w", name, tag, seed, err)
				mu.Lock()
				failed[fmt.Sprintf("%s-%d", tag, seed)] = err
				mu.Unlock()
				os.Remove(file)
				fmt.Fprintf(os.Stderr, "decide: %v\n", err)
				return "", err
			}
			took := time.Since(t0)
			mu.Lock()
			runs++
			runTime += took
			mu.Unlock()
			fmt.Fprintf(os.Stderr, "decide: %s %s seed %d measured in %.1fs\n", name, tag, seed, took.Seconds())
			return file, nil
		}
		measureAll(o.parallel, o.n, o.slowdown, measure)
		r := row{name: name}
		// try compares cand with base, an error of either run counting as
		// a try that did not decide.
		try := func(base string, baseErr error, cand string, candErr error, store string) (stat.Outcome, string, error) {
			switch {
			case baseErr != nil:
				return stat.Inconclusive, "baseline run failed: " + baseErr.Error(), nil
			case candErr != nil:
				return stat.Inconclusive, "candidate run failed: " + candErr.Error(), nil
			}
			return decide(filepath.Join(dir, "aa-0.yaml"), base, cand, store)
		}
		prev, prevErr := measure(0, 1)
		for s := 1; s <= o.n; s++ {
			aa, aaErr := measure(s, 1)
			slow, slowErr := measure(s, o.slowdown)
			aaOut, aaWhy, err := try(prev, prevErr, aa, aaErr, filepath.Join(dir, fmt.Sprintf("store-aa-%d", s)))
			if err != nil {
				return fmt.Errorf("%s A/A try %d: %w", name, s, err)
			}
			slowOut, slowWhy, err := try(prev, prevErr, slow, slowErr, filepath.Join(dir, fmt.Sprintf("store-slow-%d", s)))
			if err != nil {
				return fmt.Errorf("%s slowdown try %d: %w", name, s, err)
			}
			r.n++
			if aaOut == stat.Pass {
				r.aaPass++
			} else {
				r.aaOther = append(r.aaOther, fmt.Sprintf("try %d %s: %s", s, aaOut, aaWhy))
			}
			if slowOut == stat.Regression {
				r.slowReg++
			} else {
				r.slowOther = append(r.slowOther, fmt.Sprintf("try %d %s: %s", s, slowOut, slowWhy))
			}
			fmt.Fprintf(os.Stderr, "decide: %s try %d: A/A %s, %gx %s\n", name, s, aaOut, o.slowdown, slowOut)
			prev, prevErr = aa, aaErr
		}
		if runs > 0 {
			r.perRun = runTime / time.Duration(runs)
		}
		rows = append(rows, r)
	}

	fmt.Printf("%-16s %6s %14s %14s %10s\n", "config", "tries", "A/A exit 0", fmt.Sprintf("%gx regression", o.slowdown), "s a run")
	for _, r := range rows {
		fmt.Printf("%-16s %6d %9d/%-4d %9d/%-4d %10.1f\n", r.name, r.n, r.aaPass, r.n, r.slowReg, r.n, r.perRun.Seconds())
		for _, w := range r.aaOther {
			fmt.Printf("    A/A not a pass: %s\n", w)
		}
		for _, w := range r.slowOther {
			fmt.Printf("    slowdown not a regression: %s\n", w)
		}
	}
	if o.warmupSeeds > 0 {
		return o.warmup()
	}
	return nil
}

// measureAll measures every run a config's tries need (seeds 0..n at speed,
// 1..n slowed), parallel at a time, so that the tries then find them all
// measured. A run that fails is left for its tries to report.
func measureAll(parallel, n int, slowdown float64, measure func(seed int, slowdown float64) (string, error)) {
	type job struct {
		seed     int
		slowdown float64
	}
	jobs := []job{{0, 1}}
	for s := 1; s <= n; s++ {
		jobs = append(jobs, job{s, 1}, job{s, slowdown})
	}
	sem := make(chan struct{}, max(parallel, 1))
	var wg sync.WaitGroup
	for _, j := range jobs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			measure(j.seed, j.slowdown) //nolint:errcheck // its tries report it
		}()
	}
	wg.Wait()
}

// repoRoot is the module's root: this program runs from it or below.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the perfgate module (no go.mod above the working directory)")
		}
		dir = parent
	}
}

// skipped are the examples that are not configs of their own to decide.
var skipped = map[string]string{
	"capacity":        "a sweep (no gates) and a capacity search: bench/capacity_test.go's CapacityRegression",
	"capacity-slower": "capacity.yaml's candidate",
	"demo-slower":     "demo.yaml's candidate",
}

func configNames(root, list string) ([]string, error) {
	if list == "none" {
		return nil, nil
	}
	if list != "all" {
		return strings.Split(list, ","), nil
	}
	files, err := filepath.Glob(filepath.Join(root, "examples", "*.yaml"))
	if err != nil {
		return nil, err
	}
	names := []string{"readme"}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		if why, skip := skipped[name]; skip {
			fmt.Fprintf(os.Stderr, "decide: skipping examples/%s.yaml: %s\n", name, why)
			continue
		}
		names = append(names, name)
	}
	return names, nil
}

// readmeExample is the README's perfgate.yaml example: the yaml block after
// the "### perfgate.yaml" heading.
var readmeExample = regexp.MustCompile("(?s)### perfgate.yaml\n.*?```yaml\n(.*?)```")

// loadSource reads a config as a YAML map: "readme" is the README's
// example, anything else examples/<name>.yaml. Relative paths in it resolve
// against examples/.
func loadSource(root, name string) (map[string]any, error) {
	var data []byte
	if name == "readme" {
		doc, err := os.ReadFile(filepath.Join(root, "README.md"))
		if err != nil {
			return nil, err
		}
		m := readmeExample.FindSubmatch(doc)
		if m == nil {
			return nil, errors.New("README.md has no perfgate.yaml example")
		}
		data = m[1]
	} else {
		var err error
		data, err = os.ReadFile(filepath.Join(root, "examples", name+".yaml"))
		if err != nil {
			return nil, err
		}
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return m, nil
}

// generate writes the cut copy of src for one run (the simulator's seed and
// slowdown) into dir as <tag>.yaml and returns its path.
func (o options) generate(src map[string]any, dir, tag string, seed int, slowdown float64) (string, error) {
	var c map[string]any
	b, err := json.Marshal(src) // a deep copy
	if err != nil {
		return "", err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return "", err
	}
	examples := filepath.Join(o.root, "examples")
	port, err := freePort()
	if err != nil {
		return "", err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	target, _ := c["target"].(map[string]any)
	if target == nil {
		target = map[string]any{}
	}
	target["base_url"] = "http://" + addr
	c["target"] = target

	stack, _ := c["stack"].(map[string]any)
	var command []any
	if stack != nil {
		if p, _ := stack["process"].(map[string]any); p != nil {
			command, _ = p["command"].([]any)
		}
	}
	var args []string
	if len(command) > 1 {
		for i := 2; i < len(command); i++ { // perfgate sim ...
			a := fmt.Sprint(command[i])
			switch a {
			case "--addr", "--seed", "--slowdown", "--truth":
				i++ // and its value
				continue
			}
			if strings.HasPrefix(a, "--addr=") || strings.HasPrefix(a, "--seed=") || strings.HasPrefix(a, "--truth=") {
				continue
			}
			args = append(args, a)
		}
	} else {
		args = []string{"--step-base", "4ms", "--per-prefill-token", "20us"}
	}
	args = append(args, "--addr", addr, "--seed", strconv.Itoa(seed))
	if slowdown != 1 {
		args = append(args, "--slowdown", strconv.FormatFloat(slowdown, 'g', -1, 64))
	}
	cmd := []any{o.perfgate, "sim"}
	for _, a := range args {
		cmd = append(cmd, a)
	}
	c["stack"] = map[string]any{
		"kind": "process", "engine": "sim", "log": filepath.Join(dir, tag+"-stack.log"), "stop_grace": "5s",
		"process": map[string]any{"command": cmd, "dir": o.root},
	}

	w, _ := c["warmup"].(map[string]any)
	if w == nil {
		w = map[string]any{}
	}
	w["window"] = "1s"
	w["windows"] = 3
	w["max"] = "5s"
	w["on_unsteady"] = "warn"
	delete(w, "min")
	c["warmup"] = w

	scenarios, _ := c["scenarios"].([]any)
	for _, s := range scenarios {
		sc, _ := s.(map[string]any)
		if sc == nil {
			continue
		}
		if wl, ok := sc["workload"].(string); ok && !filepath.IsAbs(wl) {
			sc["workload"] = filepath.Join(examples, wl)
		}
		req := o.requests
		if v, ok := sc["requests"]; ok {
			if n, err := strconv.Atoi(fmt.Sprint(v)); err == nil && n < req {
				req = n
			}
		}
		sc["requests"] = req
		delete(sc, "duration")
	}
	if q, _ := c["quality"].(map[string]any); q != nil {
		if suites, _ := q["suites"].([]any); suites != nil {
			for i, s := range suites {
				if p := fmt.Sprint(s); !filepath.IsAbs(p) {
					suites[i] = filepath.Join(examples, p)
				}
			}
		}
	}
	if cp, _ := c["compare"].(map[string]any); cp != nil {
		delete(cp, "baselines")
	}
	out, err := yaml.Marshal(c)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, tag+".yaml")
	return path, os.WriteFile(path, out, 0o644)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// perfgateRun runs `perfgate run` on conf, writing the result to out and its
// output to log.
func (o options) perfgateRun(conf, out, log string) error {
	f, err := os.Create(log)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.Command(o.perfgate, "run", "-c", conf, "-o", out)
	cmd.Dir = o.root
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Run(); err != nil {
		tail, _ := os.ReadFile(log)
		return fmt.Errorf("perfgate run -c %s: %w\n%s", conf, err, lastLines(string(tail), 15))
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// decide compares cand with base as perfgate gate does: the baseline
// promoted to a store of its own, the gate prepared from the config, the
// looks of a sequential gate replayed on the candidate's first
// repetitions (as many as the gate would have measured), and the verdict.
// It returns the verdict's outcome and, when it is not what an A/A or a
// slowdown should give, the gates that made it.
func decide(cfgPath, baseFile, candFile, storeDir string) (stat.Outcome, string, error) {
	cfg, err := config.LoadFile(cfgPath)
	if err != nil {
		return "", "", err
	}
	base, err := result.Read(baseFile)
	if err != nil {
		return "", "", err
	}
	cand, err := result.Read(candFile)
	if err != nil {
		return "", "", err
	}
	_ = os.RemoveAll(storeDir)
	store := baseline.Store{Dir: storeDir}
	if _, err := store.Promote(base, baseline.Meta{Commit: "base"}); err != nil {
		return "", "", err
	}
	scenarios, err := run.Prepare(cfg, nil)
	if err != nil {
		return "", "", err
	}
	g, err := gate.Prepare(cfg, scenarios, store, false)
	if err != nil {
		return "", "", err
	}
	g.Looks = io.Discard
	res := *cand
	res.Scenarios = slices.Clone(cand.Scenarios)
	for i := range res.Scenarios {
		sc := &res.Scenarios[i]
		all := sc.Repetitions
		n := cfg.Repetitions.Min
		for n < len(all) {
			partial := *sc
			partial.Repetitions = all[:n]
			if !g.More(&partial) {
				break
			}
			n++
		}
		sc.Repetitions = all[:min(n, len(all))]
	}
	v, err := g.Verdict(&res)
	if err != nil {
		return "", "", err
	}
	var why []string
	for _, sc := range v.Scenarios {
		for _, gt := range sc.Gates {
			if gt.Outcome != stat.Pass {
				why = append(why, fmt.Sprintf("%s %s %s (%s)", sc.Name, gt.Metric, gt.Outcome, gt.Reason))
			}
		}
		for _, q := range sc.Quality {
			for _, gt := range q.Gates {
				if gt.Outcome != stat.Pass {
					why = append(why, fmt.Sprintf("%s %s %s %s (%s)", sc.Name, q.Name, gt.Metric, gt.Outcome, gt.Reason))
				}
			}
		}
	}
	return v.Outcome, strings.Join(why, "; "), nil
}

// warmup measures how long warm-up takes to reach steady state at Poisson
// 2 req/s over examples/workloads/chat.jsonl, the simulator at its defaults
// (a stationary server), the warm-up at its defaults, one seed a run.
func (o options) warmup() error {
	dir := filepath.Join(o.out, "warmup")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var times []float64
	notSteady := 0
	for seed := 1; seed <= o.warmupSeeds; seed++ {
		port, err := freePort()
		if err != nil {
			return err
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		conf := filepath.Join(dir, fmt.Sprintf("seed-%d.yaml", seed))
		data := fmt.Sprintf(`target: {base_url: "http://%s"}
stack:
  kind: process
  engine: sim
  log: %q
  process:
    command: [%q, sim, --addr, %q, --seed, "%d"]
warmup: {on_unsteady: warn}
repetitions: 1
seed: %d
gates: {ttft.p95: off, ttft.p99: off, tpot.p99: off, e2e.p99: off, output_throughput: off, goodput: off, error_rate: off, cold_start: off}
scenarios:
  - name: poisson-2
    workload: %q
    load: {type: poisson, rate: 2}
    requests: 4
`, addr, filepath.Join(dir, fmt.Sprintf("seed-%d-stack.log", seed)), o.perfgate, addr, seed, seed,
			filepath.Join(o.root, "examples", "workloads", "chat.jsonl"))
		if err := os.WriteFile(conf, []byte(data), 0o644); err != nil {
			return err
		}
		out := filepath.Join(dir, fmt.Sprintf("seed-%d.json", seed))
		if _, err := os.Stat(out); err != nil {
			if err := o.perfgateRun(conf, out, filepath.Join(dir, fmt.Sprintf("seed-%d.log", seed))); err != nil {
				return err
			}
		}
		r, err := result.Read(out)
		if err != nil {
			return err
		}
		w := r.Scenarios[0].Warmup
		if w == nil {
			return fmt.Errorf("%s: no warm-up recorded", out)
		}
		state := "steady"
		if !w.Steady {
			state = "NOT steady"
			notSteady++
		}
		fmt.Printf("warm-up seed %2d: %6.1fs, %d windows, %s\n", seed, float64(w.Duration), len(w.Windows), state)
		times = append(times, float64(w.Duration))
	}
	slices.Sort(times)
	fmt.Printf("warm-up at Poisson 2 req/s over chat.jsonl, %d seeds: median %.1fs, min %.1fs, max %.1fs, not steady %d\n",
		len(times), stat.SortedMedian(times), times[0], times[len(times)-1], notSteady)
	return nil
}
