// Package telemetry samples what the serving stack does while perfgate
// measures it: the engine's Prometheus /metrics page (KV-cache use, queue,
// prefix-cache hits, preemptions, the engine's own latency histograms) and
// the GPUs (memory, utilisation, power, through NVML, nvidia-smi or a DCGM
// exporter). A Collector samples both every interval during each measured
// repetition and folds the samples into the repetition's
// result.EngineTelemetry and result.GPUTelemetry.
//
// Telemetry never fails a run: a source that cannot be read is reported
// "unavailable" once, with the reason, and the repetitions carry no figures
// from it.
//
// Nothing a source sends can crash, hang or exhaust perfgate, or fool its
// figures: every read is bounded in bytes and in time, a redirect is an
// error naming where it pointed (the page of another server is never
// read), a page that is not Prometheus text is an error (never a panic of
// the parser), and a figure that cannot be true (a negative KV-cache use, a
// power draw of 1e30 W, buckets that decrease) is refused and named in a
// warning, never averaged (see EngineWindow and checkGPUSample).
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package telemetry
