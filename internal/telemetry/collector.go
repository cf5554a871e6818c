package telemetry

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/perfgate/perfgate/internal/result"
)

// Options say what a Collector reads.
type Options struct {
	// MetricsURL is the engine's metrics page; empty is off.
	MetricsURL string
	// MetricsHeader is sent with every read of MetricsURL, and
	// MetricsRedact takes its secrets out of errors (EngineScraper).
	MetricsHeader map[string]string
	MetricsRedact func(string) string
	// GPU says how to find a GPU source.
	GPU GPUOptions
	// Devices selects the GPUs that count (empty: all).
	Devices []int
	// Interval is the time between samples.
	Interval time.Duration
	// Client reads the engine page; nil is a client with a 5s timeout.
	Client *http.Client
	// OneOf, above 1, says the engine page is one replica's of that many
	// (target.base_urls): its figures are that replica's alone, said so in
	// the source, and its TTFT is not set against perfgate's, which spans
	// every replica (no TTFT overhead).
	OneOf int
}

// Collector samples the engine's metrics page and the GPUs during measured
// windows. Its Begin is what run.Measurement.Observe calls.
type Collector struct {
	engine   *EngineScraper
	adapter  *Adapter
	gpu      GPUSource
	devices  []int
	interval time.Duration
	oneOf    int // the engine page is one replica's of this many (Options.OneOf)

	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Ticks makes the sampling ticker: a channel that fires every d and a
	// function that stops it. Nil is time.NewTicker.
	Ticks func(d time.Duration) (<-chan time.Time, func())
	// Warn, if set, is told once per source when a source that answered
	// at the start fails during the run (its samples are then skipped). It
	// is called as the window ends, on the goroutine that ends it, never
	// from the sampling goroutines.
	Warn func(msg string)

	warnMu  sync.Mutex
	warned  map[string]bool
	pending []string
}

// Open prepares a collector: it reads the engine page once, to learn which
// engine's metric names it speaks, and picks a GPU source. It never fails:
// what cannot be read is described in the returned TelemetryInfo, and the
// collector leaves it out. gpus are the GPUs the source saw, for the
// result's identity.
func Open(ctx context.Context, o Options) (c *Collector, info result.TelemetryInfo, gpus []result.GPU) {
	c = &Collector{devices: o.Devices, interval: o.Interval, oneOf: o.OneOf}
	if o.MetricsURL == "" {
		info.Engine.Unavailable = "off (telemetry.metrics: off)"
	} else {
		s := &EngineScraper{URL: o.MetricsURL, Client: o.Client, Header: o.MetricsHeader, Redact: o.MetricsRedact}
		page, err := s.Scrape(ctx)
		switch {
		case err != nil:
			info.Engine.Unavailable = err.Error()
		default:
			if a, ok := Detect(page); ok {
				c.engine, c.adapter = s, a
				info.Engine.Source = a.Name + " " + o.MetricsURL
				if o.OneOf > 1 {
					info.Engine.Source += fmt.Sprintf(" (one replica of %d: its figures alone)", o.OneOf)
				}
			} else {
				info.Engine.Unavailable = fmt.Sprintf("%s has no metric perfgate knows (vllm:, sglang:, tgi_, llamacpp:)", o.MetricsURL)
			}
		}
	}
	src, devices, why := OpenGPU(ctx, o.GPU)
	if src == nil {
		info.GPU.Unavailable = why
	} else {
		c.gpu = src
		info.GPU.Source = src.Describe()
		gpus = selectDevices(devices, o.Devices)
	}
	return c, info, gpus
}

// selectDevices keeps the GPUs whose index is in want (all when want is
// empty).
func selectDevices(gpus []result.GPU, want []int) []result.GPU {
	if len(want) == 0 {
		return gpus
	}
	var out []result.GPU
	for _, g := range gpus {
		if slices.Contains(want, g.Index) {
			out = append(out, g)
		}
	}
	return out
}

// Active reports whether the collector reads anything.
func (c *Collector) Active() bool { return c != nil && (c.engine != nil || c.gpu != nil) }

// Close frees the GPU source.
func (c *Collector) Close() error {
	if c == nil || c.gpu == nil {
		return nil
	}
	return c.gpu.Close()
}

func (c *Collector) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Collector) ticks() (<-chan time.Time, func()) {
	if c.Ticks != nil {
		return c.Ticks(c.interval)
	}
	t := time.NewTicker(c.interval)
	return t.C, t.Stop
}

// warn queues a warning about a failing source, once per source.
func (c *Collector) warn(source string, err error) {
	c.warnOnce(source, fmt.Sprintf("%s telemetry: %v (samples that fail are skipped)", source, err))
}

// warnOnce queues msg unless a warning was queued under key before.
func (c *Collector) warnOnce(key, msg string) {
	c.warnMu.Lock()
	defer c.warnMu.Unlock()
	if c.warned[key] {
		return
	}
	if c.warned == nil {
		c.warned = map[string]bool{}
	}
	c.warned[key] = true
	c.pending = append(c.pending, msg)
}

// flushWarnings hands the queued warnings to Warn.
func (c *Collector) flushWarnings() {
	c.warnMu.Lock()
	pending := c.pending
	c.pending = nil
	c.warnMu.Unlock()
	if c.Warn == nil {
		return
	}
	for _, msg := range pending {
		c.Warn(msg)
	}
}

// Begin starts sampling a measured window: one sample of each source now,
// then one every interval. The function it returns stops sampling, takes a
// last sample (after the window's last response) and adds the window's
// engine and GPU telemetry to rep; called with nil, it only stops.
//
// A source that fails during the window (an error, a page that cannot be
// parsed, a GPU sample with a figure that cannot be true) has that sample
// skipped and is warned about once; a page's figure that cannot be true is
// left out of the window's figures and warned about once. The run goes on.
func (c *Collector) Begin(ctx context.Context) (end func(rep *result.Repetition)) {
	if !c.Active() {
		return func(*result.Repetition) {}
	}
	start := c.now()
	stop := make(chan struct{})
	var (
		wg      sync.WaitGroup
		window  *EngineWindow // pages are folded in as they come: the window holds two at most
		samples []TimedSample
	)
	if c.engine != nil {
		window = NewEngineWindow(c.adapter)
	}
	scrape := func(ctx context.Context) {
		p, err := c.engine.Scrape(ctx)
		if err != nil {
			if ctx.Err() == nil {
				c.warn("engine", err)
			}
			return
		}
		window.Add(p)
	}
	sample := func(ctx context.Context) {
		s, err := c.gpu.Sample(ctx)
		if err == nil {
			err = checkGPUSamples(s)
		}
		if err != nil {
			if ctx.Err() == nil {
				c.warn("GPU", err)
			}
			return
		}
		samples = append(samples, TimedSample{At: c.now().Sub(start), GPUs: s})
	}
	loop := func(read func(context.Context)) {
		defer wg.Done()
		read(ctx)
		tick, stopTicks := c.ticks()
		defer stopTicks()
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-tick:
				read(ctx) // a read begun finishes: its own timeout bounds it
			}
		}
	}
	if c.engine != nil {
		wg.Add(1)
		go loop(scrape)
	}
	if c.gpu != nil {
		wg.Add(1)
		go loop(sample)
	}
	return func(rep *result.Repetition) {
		close(stop)
		wg.Wait() // the loops own window and samples until here
		defer c.flushWarnings()
		if rep == nil {
			return
		}
		final, cancelFinal := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancelFinal()
		if c.engine != nil {
			scrape(final)
			rep.Engine = window.Summary(rep.TTFT.Mean, rep.TTFT.Count > 0 && c.oneOf <= 1)
			// Once per series or figure for the whole run, whatever its value.
			for _, k := range slices.Sorted(maps.Keys(window.refused)) {
				c.warnOnce("engine figure "+k, "engine telemetry: "+window.refused[k])
			}
		}
		if c.gpu != nil {
			sample(final)
			rep.GPU = SummariseGPU(c.gpu.Kind(), c.interval, samples, rep.Duration.Dur(), rep.OutputTokens, c.devices)
		}
	}
}
