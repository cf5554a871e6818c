package telemetry

import (
	"context"

	dto "github.com/prometheus/client_model/go"
)

// Queue reads the engine's metrics page now and returns its requests
// running and waiting (each summed over the page's series). ok is false
// when the collector reads no engine page, the page cannot be read, or it
// shows neither count; a count the page lacks is 0. Warm-up asks it to see
// the queue grow, and to drain.
func (c *Collector) Queue(ctx context.Context) (running, waiting float64, ok bool) {
	if c == nil || c.engine == nil {
		return 0, 0, false
	}
	p, err := c.engine.Scrape(ctx)
	if err != nil {
		return 0, 0, false
	}
	ignore := func(*dto.MetricFamily, *dto.Metric, float64, valueRange) {}
	running, okR := p.gauge(c.adapter.running, foldSum, requestsRange, ignore)
	waiting, okW := p.gauge(c.adapter.waiting, foldSum, requestsRange, ignore)
	return running, waiting, okR || okW
}

// HasQueue reports whether the collector reads an engine page, whose
// requests running and waiting Queue can ask for.
func (c *Collector) HasQueue() bool { return c != nil && c.engine != nil }
