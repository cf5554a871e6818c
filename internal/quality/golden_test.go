package quality

import "flag"

// update rewrites golden files (testdata/*.golden) and the generated example
// suite instead of comparing with them.
var update = flag.Bool("update", false, "rewrite golden files and examples/evals/arithmetic.jsonl")
