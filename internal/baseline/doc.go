// Package baseline is the store of promoted baselines: baselines/<scenario>.json,
// the result that pull requests are compared against, and
// baselines/history.jsonl, one compact summary line per promotion, for trends
// and change points.
package baseline
