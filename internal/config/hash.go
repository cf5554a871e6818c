package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
)

// Hash identifies the config in results: "sha256:" and the hex SHA-256 of the
// canonical JSON of the defaulted config (encoding/json: struct fields in
// declaration order, map keys sorted, durations in nanoseconds). Two files
// that differ only in layout, comments, or in stating a default or leaving it
// out, hash the same.
//
// Header values are left out (their names are kept): they are usually
// credentials, which rotate without changing what is measured, and a result
// file should not carry a fingerprint of a secret. For the same reason the
// values of stack environment variables whose names look secret (TOKEN, KEY,
// SECRET, PASSWORD, CREDENTIAL, AUTH) are left out; other variables
// (VLLM_ATTENTION_BACKEND=FLASHINFER) change what is measured and are hashed. Path and Dir are left out
// too: where the file lies does not change the run. Salting appears only in
// the scenarios that turn it off, so adding the salt key changed no hash.
func (c *Config) Hash() string {
	cc := *c
	if len(c.Target.Headers) > 0 {
		cc.Target.Headers = maps.Clone(c.Target.Headers)
		for k := range cc.Target.Headers {
			cc.Target.Headers[k] = ""
		}
	}
	if p := c.Stack.Process; p != nil {
		pc := *p
		pc.Env = redactSecrets(p.Env)
		cc.Stack.Process = &pc
	}
	if d := c.Stack.Docker; d != nil {
		dc := *d
		dc.Env = redactSecrets(d.Env)
		cc.Stack.Docker = &dc
	}
	// Salting is hashed per scenario, and only where it is off: configs
	// from before the salt key, and configs that state the default, keep
	// their hash; one that turns salting off (measuring a warm cache) does
	// not compare with one that leaves it on.
	cc.Salt = nil
	// How perfgate ab holds its stacks is not what is measured, nor which
	// gates get a tail test.
	cc.AB = AB{}
	cc.Compare.Tail = ""
	cc.Compare.Estimator = ""
	// Nor which percentiles are taken of the requests measured.
	cc.Percentiles = nil
	// How long an external server is given to answer is not what is
	// measured either; the key came later and changed no hash.
	cc.Stack.ExternalReadyTimeout = 0
	cc.Scenarios = slices.Clone(c.Scenarios)
	for i := range cc.Scenarios {
		cc.Scenarios[i].Salt = nil
		cc.Scenarios[i].Load.Overload = cc.Scenarios[i].Load.resultOverload() // the default, written or not, hashes alike
		cc.Scenarios[i].Load.Arrivals = cc.Scenarios[i].Load.resultArrivals()
		if !c.SaltOf(c.Scenarios[i]) {
			off := false
			cc.Scenarios[i].Salt = &off
		}
	}
	b, err := json.Marshal(cc)
	if err != nil {
		// Config holds only strings, numbers, slices and maps of strings;
		// it always marshals.
		panic("config: marshal for hash: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// redactSecrets returns env with the values of secret-looking names blanked.
func redactSecrets(env map[string]string) map[string]string {
	if len(env) == 0 {
		return env
	}
	out := maps.Clone(env)
	for k := range out {
		if LooksSecret(k) {
			out[k] = ""
		}
	}
	return out
}

// WorkloadPath is the file of a scenario's workload, resolved against the
// config's directory (an absolute path is kept as it is); "" for a synthetic
// workload.
func (c *Config) WorkloadPath(s Scenario) string {
	return resolve(c.Dir, s.Workload)
}
