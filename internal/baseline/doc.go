// Package baseline is the store of promoted baselines: baselines/<scenario>.json,
// the result that pull requests are compared against, and
// baselines/history.jsonl, one compact summary line per promotion, for trends
// and change points.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package baseline
