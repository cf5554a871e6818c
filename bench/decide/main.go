package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
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
	"github.com/perfgate/perfgate/internal/reportfile"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
)

type options struct {
	n, baselines int
	configs      string
	out          string
	perfgate     string
	slowdown     float64
	cut          bool
	requests     int
	warmupSeeds  int
	parallel     int
	root         string
}

func main() {
	var o options
	flag.IntVar(&o.n, "n", 40, "tries per config (an A/A gate and a slowed gate each)")
	flag.IntVar(&o.baselines, "baselines", 10, "baselines per config, measured as the main branch would; try s gates against baseline s mod this")
	flag.StringVar(&o.configs, "configs", "all", "comma-separated: readme, init and the names of examples/*.yaml without .yaml (demo, perfgate, ...), or all, or none")
	flag.StringVar(&o.out, "out", "demo-out/decide", "directory for the generated configs, results and logs")
	flag.StringVar(&o.perfgate, "perfgate", "bin/perfgate", "the perfgate binary (go build -o bin/perfgate ./cmd/perfgate)")
	flag.Float64Var(&o.slowdown, "slowdown", 1.3, "the slower candidate's --slowdown")
	flag.BoolVar(&o.cut, "cut", false, "measure quick cut copies (at most -requests a repetition, a short warm-up), not the configs' own settings")
	flag.IntVar(&o.requests, "requests", 24, "with -cut: requests per repetition at most (a scenario's own, if fewer; replaces a duration)")
	flag.IntVar(&o.warmupSeeds, "warmup-seeds", 20, "seeds of the warm-up measurement at Poisson 2 req/s (0 skips it)")
	flag.IntVar(&o.parallel, "parallel", 1, "runs measured at once (a run mostly waits on the simulator's clock: several at once cost little CPU, but each adds timing noise on a small machine)")
	flag.Parse()
	if err := mainErr(o); err != nil {
		fmt.Fprintln(os.Stderr, "decide:", err)
		os.Exit(1)
	}
}

// outcome is one gate run's: the verdict's outcome (or why there was
// none), the gates that were not a pass, and what the run took.
type outcome struct {
	verdict stat.Outcome
	why     string
	reps    int // the candidate's repetitions, summed over its scenarios
	took    time.Duration
	err     error
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
		baseTime, aaTime   time.Duration
		aaReps             float64
		aaOther, slowOther []string
	}
	var rows []row
	for _, name := range names {
		src, err := loadSource(root, o, name)
		if err != nil {
			return err
		}
		dir := filepath.Join(o.out, name)
		if o.cut {
			dir += "-cut"
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		// The baselines, as the main branch measures and promotes them.
		baseTimes := make([]time.Duration, o.baselines)
		baseErrs := make([]error, o.baselines)
		parallel(o.parallel, o.baselines, func(b int) {
			baseTimes[b], baseErrs[b] = o.measureBaseline(src, dir, b)
		})
		// The tries: an A/A gate and a slowed gate against baseline
		// try mod baselines.
		aa := make([]outcome, o.n)
		slow := make([]outcome, o.n)
		parallel(o.parallel, 2*o.n, func(j int) {
			s, slowed := j/2, j%2 == 1
			b := s % o.baselines
			if baseErrs[b] != nil {
				out := outcome{err: fmt.Errorf("baseline %d failed: %w", b, baseErrs[b])}
				if slowed {
					slow[s] = out
				} else {
					aa[s] = out
				}
				return
			}
			if slowed {
				slow[s] = o.gate(src, dir, "slow", s+1, 200+s, o.slowdown, b)
			} else {
				aa[s] = o.gate(src, dir, "aa", s+1, 100+s, 1, b)
			}
		})
		r := row{name: name, n: o.n}
		var bt time.Duration
		nb := 0
		for b, t := range baseTimes {
			if baseErrs[b] == nil {
				bt += t
				nb++
			}
		}
		if nb > 0 {
			r.baseTime = bt / time.Duration(nb)
		}
		reps, measured := 0, 0
		for s := range o.n {
			if a := aa[s]; a.err == nil && a.verdict == stat.Pass {
				r.aaPass++
			} else {
				r.aaOther = append(r.aaOther, fmt.Sprintf("try %d %s", s+1, a.describe()))
			}
			if a := aa[s]; a.err == nil {
				r.aaTime += a.took
				reps += a.reps
				measured++
			}
			if sl := slow[s]; sl.err == nil && sl.verdict == stat.Regression {
				r.slowReg++
			} else {
				r.slowOther = append(r.slowOther, fmt.Sprintf("try %d %s", s+1, sl.describe()))
			}
		}
		if measured > 0 {
			r.aaTime /= time.Duration(measured)
			r.aaReps = float64(reps) / float64(measured)
		}
		rows = append(rows, r)
	}

	fmt.Printf("%-16s %6s %12s %16s %12s %12s %14s\n", "config", "tries", "A/A pass", fmt.Sprintf("%gx regression", o.slowdown), "s a baseline", "s an A/A gate", "A/A repetitions")
	for _, r := range rows {
		fmt.Printf("%-16s %6d %7d/%-4d %11d/%-4d %12.0f %12.0f %14.1f\n", r.name, r.n, r.aaPass, r.n, r.slowReg, r.n, r.baseTime.Seconds(), r.aaTime.Seconds(), r.aaReps)
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

// describe says what a gate run gave: its verdict and the gates that did
// not pass, or why it gave none.
func (c outcome) describe() string {
	if c.err != nil {
		return "failed: " + c.err.Error()
	}
	if c.why == "" {
		return string(c.verdict)
	}
	return string(c.verdict) + ": " + c.why
}

// parallel calls f(0..n-1), at most width at a time.
func parallel(width, n int, f func(int)) {
	sem := make(chan struct{}, max(width, 1))
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			f(i)
		}()
	}
	wg.Wait()
}

// measureBaseline measures baseline b of a config (perfgate run, every
// repetition) and promotes it into the baselines directory store-b; a
// baseline kept from an earlier invocation is reused.
func (o options) measureBaseline(src map[string]any, dir string, b int) (time.Duration, error) {
	tag := fmt.Sprintf("base-%d", b)
	file := filepath.Join(dir, tag+".json")
	store := baseline.Store{Dir: filepath.Join(dir, "store-"+strconv.Itoa(b))}
	if _, err := os.Stat(file); err == nil {
		return took(file), promoteOnce(store, file)
	}
	conf, err := o.generate(src, dir, tag, b, 1)
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	if err := o.perfgateCmd(filepath.Join(dir, tag+".log"), "run", "-c", conf, "-o", file); err != nil {
		err = fmt.Errorf("baseline %d: %w", b, err)
		fmt.Fprintf(os.Stderr, "decide: %v\n", err)
		return 0, err
	}
	d := time.Since(t0)
	writeTook(file, d)
	fmt.Fprintf(os.Stderr, "decide: %s measured in %.0fs\n", file, d.Seconds())
	return d, promoteOnce(store, file)
}

// promoteOnce makes the result in file the baseline of store, unless it
// already is.
func promoteOnce(store baseline.Store, file string) error {
	if _, err := os.Stat(store.HistoryPath()); err == nil {
		return nil
	}
	r, err := result.Read(file)
	if err != nil {
		return err
	}
	_, err = store.Promote(r, baseline.Meta{Commit: "base", Date: r.FinishedAt})
	return err
}

// gate runs perfgate gate for one candidate (tag aa or slow, try s, the
// simulator's seed, its slowdown) against baseline b, as a pull request
// does, and reads its verdict from the report; one kept from an earlier
// invocation is reused.
func (o options) gate(src map[string]any, dir, tag string, s, seed int, slowdown float64, b int) outcome {
	name := fmt.Sprintf("%s-%d", tag, s)
	reportFile := filepath.Join(dir, name+".report.json")
	resultFile := filepath.Join(dir, name+".json")
	if _, err := os.Stat(reportFile); err != nil {
		conf, err := o.generate(src, dir, name, seed, slowdown)
		if err != nil {
			return outcome{err: err}
		}
		t0 := time.Now()
		err = o.perfgateCmd(filepath.Join(dir, name+".log"), "gate", "-c", conf, "--baselines", filepath.Join(dir, "store-"+strconv.Itoa(b)),
			"-o", resultFile, "--report", reportFile)
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
			fmt.Fprintf(os.Stderr, "decide: %s: %v\n", name, err)
			return outcome{err: err}
		}
		writeTook(resultFile, time.Since(t0))
		fmt.Fprintf(os.Stderr, "decide: %s gated in %.0fs\n", name, time.Since(t0).Seconds())
	}
	doc, err := reportfile.Read(reportFile)
	if err != nil {
		return outcome{err: err}
	}
	out := outcome{verdict: doc.Verdict.Outcome, took: took(resultFile)}
	var why []string
	for _, sc := range doc.Verdict.Scenarios {
		out.reps += sc.CandidateN
		for _, g := range sc.Gates {
			if g.Outcome != stat.Pass {
				why = append(why, fmt.Sprintf("%s %s %s (%s)", sc.Name, g.Metric, g.Outcome, g.Reason))
			}
		}
		for _, q := range sc.Quality {
			for _, g := range q.Gates {
				if g.Outcome != stat.Pass {
					why = append(why, fmt.Sprintf("%s %s %s %s (%s)", sc.Name, q.Name, g.Metric, g.Outcome, g.Reason))
				}
			}
		}
	}
	out.why = strings.Join(why, "; ")
	return out
}

// writeTook and took keep how long the run of a result file took beside
// it, so that a later invocation that reuses the file can report it.
func writeTook(file string, d time.Duration) {
	_ = os.WriteFile(file+".took", []byte(d.String()), 0o644)
}

func took(file string) time.Duration {
	b, err := os.ReadFile(file + ".took")
	if err != nil {
		return 0
	}
	d, _ := time.ParseDuration(string(b))
	return d
}

// perfgateCmd runs perfgate with args in the repository root, its output
// to log.
func (o options) perfgateCmd(log string, args ...string) error {
	f, err := os.Create(log)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.Command(o.perfgate, args...)
	cmd.Dir = o.root
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Run(); err != nil {
		tail, _ := os.ReadFile(log)
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 {
			return err // a verdict: the caller reads it
		}
		return fmt.Errorf("perfgate %s: %w\n%s", strings.Join(args, " "), err, lastLines(string(tail), 15))
	}
	return nil
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
	names := []string{"readme", "init"}
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
// example, "init" the config perfgate init writes (offline, for the
// simulator's model), anything else examples/<name>.yaml. Relative paths
// in it resolve against examples/.
func loadSource(root string, o options, name string) (map[string]any, error) {
	var data []byte
	switch name {
	case "init":
		tmp, err := os.MkdirTemp("", "decide-init")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		path := filepath.Join(tmp, "perfgate.yaml")
		out, err := exec.Command(o.perfgate, "init", "--target", "http://127.0.0.1:8000", "--model", "perfgate-sim-8b", "-o", path).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("perfgate init: %w\n%s", err, out)
		}
		if data, err = os.ReadFile(path); err != nil {
			return nil, err
		}
	case "readme":
		doc, err := os.ReadFile(filepath.Join(root, "README.md"))
		if err != nil {
			return nil, err
		}
		m := readmeExample.FindSubmatch(doc)
		if m == nil {
			return nil, errors.New("README.md has no perfgate.yaml example")
		}
		data = m[1]
	default:
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

// generate writes the copy of src for one run (the simulator's seed and
// slowdown; with -cut, the quick cut) into dir as <tag>.yaml and returns
// its path.
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
	answerSeed := "1" // the config's own --seed: one model's answers in every run
	if len(command) > 1 {
		for i := 2; i < len(command); i++ { // perfgate sim ...
			a := fmt.Sprint(command[i])
			switch a {
			case "--seed":
				if i+1 < len(command) {
					answerSeed = fmt.Sprint(command[i+1])
				}
				i++
				continue
			case "--addr", "--slowdown", "--truth", "--answer-seed":
				i++ // and its value
				continue
			}
			if strings.HasPrefix(a, "--addr=") || strings.HasPrefix(a, "--seed=") || strings.HasPrefix(a, "--truth=") {
				continue
			}
			args = append(args, a)
		}
	} else if o.cut {
		args = []string{"--step-base", "4ms", "--per-prefill-token", "20us"}
	}
	// A seed of its own for the run's timing; the answers (which eval
	// items are right) one model's, as greedy decoding of one model gives
	// on every run: an A/A is the same model, a slower one answers alike.
	args = append(args, "--addr", addr, "--seed", strconv.Itoa(seed), "--answer-seed", answerSeed)
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

	if o.cut {
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
	}

	scenarios, _ := c["scenarios"].([]any)
	for _, s := range scenarios {
		sc, _ := s.(map[string]any)
		if sc == nil {
			continue
		}
		if wl, ok := sc["workload"].(string); ok && !filepath.IsAbs(wl) {
			sc["workload"] = filepath.Join(examples, wl)
		}
		if !o.cut {
			continue
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

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
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
			if err := o.perfgateCmd(filepath.Join(dir, fmt.Sprintf("seed-%d.log", seed)), "run", "-c", conf, "-o", out); err != nil {
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
