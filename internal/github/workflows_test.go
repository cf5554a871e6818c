package github_test

// Keeps the workflows honest: the repository's own (.github/workflows) and the
// documented examples (examples/workflows) parse, have triggers and jobs, never
// let a fork's code reach a self-hosted runner, pass the action only inputs
// action.yml declares and read only outputs it declares, and a workflow that
// runs with a write token on behalf of a pull request never checks out that
// pull request's code.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/perfgate/perfgate/internal/config"
)

// root is the repository root, relative to this package's directory (where
// go test runs).
const root = "../.."

type workflowFile struct {
	path string // relative to the repository root
	own  bool   // under .github/workflows: run by this repository
	doc  map[string]any
}

func loadWorkflows(t *testing.T) []workflowFile {
	t.Helper()
	var out []workflowFile
	for _, dir := range []string{".github/workflows", "examples/workflows"} {
		var names []string
		for _, pat := range []string{"*.yml", "*.yaml"} {
			m, err := filepath.Glob(filepath.Join(root, dir, pat))
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, m...)
		}
		if len(names) == 0 {
			t.Fatalf("no workflow files in %s", dir)
		}
		sort.Strings(names)
		for _, name := range names {
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(root, name)
			var doc map[string]any
			if err := yaml.Unmarshal(data, &doc); err != nil {
				t.Errorf("%s: %v", rel, err)
				continue
			}
			out = append(out, workflowFile{path: filepath.ToSlash(rel), own: dir == ".github/workflows", doc: doc})
		}
	}
	return out
}

// triggers returns the events of a workflow's `on`, which is a string, a list
// or a mapping.
func triggers(on any) []string {
	var evs []string
	switch v := on.(type) {
	case string:
		evs = append(evs, v)
	case []any:
		for _, e := range v {
			evs = append(evs, fmt.Sprint(e))
		}
	case map[string]any:
		for e := range v {
			evs = append(evs, e)
		}
	}
	sort.Strings(evs)
	return evs
}

// flatten writes every scalar of v, joined by spaces: runs-on is a string, a
// list of labels or a mapping (group, labels).
func flatten(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case []any:
		var parts []string
		for _, e := range v {
			parts = append(parts, flatten(e))
		}
		return strings.Join(parts, " ")
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, flatten(v[k]))
		}
		return strings.Join(parts, " ")
	default:
		return fmt.Sprint(v)
	}
}

func mapping(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func steps(job map[string]any) []map[string]any {
	list, _ := job["steps"].([]any)
	var out []map[string]any
	for _, s := range list {
		if m := mapping(s); m != nil {
			out = append(out, m)
		}
	}
	return out
}

// isPerfgateAction reports whether a step's uses is perfgate's action: this
// repository's own (./) or the published one.
func isPerfgateAction(uses string) bool {
	return uses == "./" || uses == "." || strings.HasPrefix(uses, "perfgate/perfgate@")
}

func TestWorkflowsHaveTriggersAndJobs(t *testing.T) {
	for _, wf := range loadWorkflows(t) {
		if len(triggers(wf.doc["on"])) == 0 {
			t.Errorf("%s: no `on` (triggers)", wf.path)
		}
		jobs := mapping(wf.doc["jobs"])
		if len(jobs) == 0 {
			t.Errorf("%s: no `jobs`", wf.path)
			continue
		}
		for _, id := range sortedKeys(jobs) {
			job := mapping(jobs[id])
			if job == nil {
				t.Errorf("%s: jobs.%s is not a mapping", wf.path, id)
				continue
			}
			if job["runs-on"] == nil && job["uses"] == nil {
				t.Errorf("%s: jobs.%s has neither runs-on nor uses", wf.path, id)
			}
			if job["uses"] == nil && len(steps(job)) == 0 {
				t.Errorf("%s: jobs.%s has no steps", wf.path, id)
			}
		}
	}
}

// Least privilege: every workflow says what its token may do, at the top or
// in every job, instead of taking the repository's default.
func TestWorkflowsDeclarePermissions(t *testing.T) {
	for _, wf := range loadWorkflows(t) {
		if _, ok := wf.doc["permissions"]; ok {
			continue
		}
		jobs := mapping(wf.doc["jobs"])
		for _, id := range sortedKeys(jobs) {
			if _, ok := mapping(jobs[id])["permissions"]; !ok {
				t.Errorf("%s: neither the workflow nor jobs.%s declares permissions", wf.path, id)
			}
		}
	}
}

// trustedOnly are the events that run only this repository's own code: a
// schedule and a manual dispatch run a branch of this repository, a push is
// by someone with write access, and workflow_run runs the default branch's
// workflow.
var trustedOnly = map[string]bool{"schedule": true, "workflow_dispatch": true, "push": true, "workflow_run": true}

// forkGuard is the `if:` that keeps a fork's pull request off a job: the head
// repository is this repository.
var forkGuard = regexp.MustCompile(`github\.event\.pull_request\.head\.repo\.full_name\s*==\s*github\.repository\b|github\.repository\s*==\s*github\.event\.pull_request\.head\.repo\.full_name`)

// A self-hosted runner must never run a fork's code: a job on one either
// guards on the pull request's head repository or belongs to a workflow that
// only trusted events start.
func TestWorkflowSelfHostedJobsGuardAgainstForks(t *testing.T) {
	selfHosted := 0
	for _, wf := range loadWorkflows(t) {
		evs := triggers(wf.doc["on"])
		var untrusted []string
		for _, e := range evs {
			if !trustedOnly[e] {
				untrusted = append(untrusted, e)
			}
		}
		jobs := mapping(wf.doc["jobs"])
		for _, id := range sortedKeys(jobs) {
			job := mapping(jobs[id])
			if !strings.Contains(flatten(job["runs-on"]), "self-hosted") {
				continue
			}
			selfHosted++
			if wf.own {
				t.Errorf("%s: jobs.%s runs on a self-hosted runner; this repository's own workflows run on GitHub-hosted runners", wf.path, id)
			}
			if job["if"] != nil && forkGuard.MatchString(fmt.Sprint(job["if"])) {
				continue
			}
			if len(untrusted) > 0 {
				t.Errorf("%s: jobs.%s runs on a self-hosted runner, is started by %v, and has no `if: github.event.pull_request.head.repo.full_name == github.repository`", wf.path, id, untrusted)
			}
		}
	}
	if selfHosted == 0 {
		t.Error("no job runs on a self-hosted runner: the examples should show the GPU runner's guard")
	}
}

// A job that runs perfgate (and so a stack: an engine, a model's code) and
// pushes nothing checks out with persist-credentials: false, so that the
// workflow's token is not left in .git/config for the stack to read.
func TestWorkflowPerfgateJobsDoNotPersistCredentials(t *testing.T) {
	runsPerfgate := regexp.MustCompile(`\bperfgate (run|gate)\b`)
	checked := 0
	for _, wf := range loadWorkflows(t) {
		jobs := mapping(wf.doc["jobs"])
		for _, id := range sortedKeys(jobs) {
			perfgate, pushes := false, false
			for _, st := range steps(mapping(jobs[id])) {
				run := flatten(st["run"])
				perfgate = perfgate || isPerfgateAction(fmt.Sprint(st["uses"])) || runsPerfgate.MatchString(run)
				pushes = pushes || strings.Contains(run, "git push")
			}
			if !perfgate || pushes {
				continue
			}
			for i, st := range steps(mapping(jobs[id])) {
				if !strings.HasPrefix(fmt.Sprint(st["uses"]), "actions/checkout@") {
					continue
				}
				checked++
				if got := flatten(mapping(st["with"])["persist-credentials"]); got != "false" {
					t.Errorf("%s: jobs.%s.steps[%d] checks out with persist-credentials: %q, want false: the job runs perfgate's stack, which could read the token from .git/config", wf.path, id, i, got)
				}
			}
		}
	}
	if checked == 0 {
		t.Error("no checkout in a job that runs perfgate: the test checks nothing")
	}
}

// A workflow started by workflow_run or pull_request_target has a write token
// on behalf of a pull request that may come from a fork: it must not check out
// (and so must not run) that pull request's code.
func TestWorkflowPrivilegedRunsDoNotCheckOutPullRequests(t *testing.T) {
	headRef := regexp.MustCompile(`head_sha|head\.sha|head_branch|head\.ref|refs/pull/|pull_request\.number`)
	for _, wf := range loadWorkflows(t) {
		privileged := false
		for _, e := range triggers(wf.doc["on"]) {
			if e == "workflow_run" || e == "pull_request_target" {
				privileged = true
			}
		}
		if !privileged {
			continue
		}
		jobs := mapping(wf.doc["jobs"])
		for _, id := range sortedKeys(jobs) {
			for i, st := range steps(mapping(jobs[id])) {
				uses := fmt.Sprint(st["uses"])
				if strings.HasPrefix(uses, "./") {
					t.Errorf("%s: jobs.%s.steps[%d] runs a local action (%s): in a privileged workflow that may be a pull request's code", wf.path, id, i, uses)
				}
				if !strings.HasPrefix(uses, "actions/checkout@") {
					continue
				}
				if ref := flatten(mapping(st["with"])["ref"]); headRef.MatchString(ref) {
					t.Errorf("%s: jobs.%s.steps[%d] checks out the pull request (ref: %s) in a workflow with a write token", wf.path, id, i, ref)
				}
			}
		}
	}
}

type actionSpec struct {
	Inputs map[string]struct {
		Required any    `yaml:"required"`
		Default  any    `yaml:"default"`
		Desc     string `yaml:"description"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Desc string `yaml:"description"`
	} `yaml:"outputs"`
	Runs struct {
		Using string   `yaml:"using"`
		Image string   `yaml:"image"`
		Args  []string `yaml:"args"`
	} `yaml:"runs"`
}

func loadAction(t *testing.T) *actionSpec {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if os.IsNotExist(err) {
		t.Skip("action.yml does not exist yet: the workflows' action inputs and outputs cannot be checked against it")
	}
	if err != nil {
		t.Fatal(err)
	}
	var a actionSpec
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if len(a.Inputs) == 0 {
		t.Fatal("action.yml declares no inputs")
	}
	return &a
}

// Every step that uses perfgate's action passes only inputs action.yml
// declares (GitHub only warns about an unknown input, and then ignores it),
// every required input without a default, and reads only outputs action.yml
// declares.
func TestWorkflowActionInputsAndOutputsExist(t *testing.T) {
	a := loadAction(t)
	outputRef := regexp.MustCompile(`steps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)`)
	used := 0
	for _, wf := range loadWorkflows(t) {
		jobs := mapping(wf.doc["jobs"])
		for _, id := range sortedKeys(jobs) {
			job := mapping(jobs[id])
			ids := map[string]bool{} // step ids of perfgate's action in this job
			for i, st := range steps(job) {
				if !isPerfgateAction(fmt.Sprint(st["uses"])) {
					continue
				}
				used++
				if sid, ok := st["id"].(string); ok {
					ids[sid] = true
				}
				with := mapping(st["with"])
				for _, in := range sortedKeys(with) {
					if _, ok := a.Inputs[in]; !ok {
						t.Errorf("%s: jobs.%s.steps[%d] passes input %q, which action.yml does not declare", wf.path, id, i, in)
					}
				}
				for name, in := range a.Inputs {
					if fmt.Sprint(in.Required) == "true" && in.Default == nil {
						if _, ok := with[name]; !ok {
							t.Errorf("%s: jobs.%s.steps[%d] leaves out the required input %q", wf.path, id, i, name)
						}
					}
				}
			}
			if len(ids) == 0 {
				continue
			}
			text, err := yaml.Marshal(job)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range outputRef.FindAllStringSubmatch(string(text), -1) {
				if !ids[m[1]] {
					continue
				}
				if _, ok := a.Outputs[m[2]]; !ok {
					t.Errorf("%s: jobs.%s reads steps.%s.outputs.%s, which action.yml does not declare", wf.path, id, m[1], m[2])
				}
			}
		}
	}
	if used == 0 {
		t.Error("no workflow uses perfgate's action")
	}
}

// This repository's own use of its action (uses: ./) names a config that
// exists and loads, and whose baselines are the repository's baselines/.
func TestWorkflowSelfGateConfig(t *testing.T) {
	a := loadAction(t)
	found := 0
	for _, wf := range loadWorkflows(t) {
		if !wf.own {
			continue
		}
		jobs := mapping(wf.doc["jobs"])
		for _, id := range sortedKeys(jobs) {
			for _, st := range steps(mapping(jobs[id])) {
				if u := fmt.Sprint(st["uses"]); u != "./" && u != "." {
					continue
				}
				with := mapping(st["with"])
				dir := "."
				if d, ok := with["working-directory"].(string); ok {
					dir = d
				} else if d, ok := a.Inputs["working-directory"].Default.(string); ok && d != "" {
					dir = d
				}
				cfgPath, _ := with["config"].(string)
				if cfgPath == "" {
					cfgPath, _ = a.Inputs["config"].Default.(string)
				}
				path := filepath.Join(root, dir, cfgPath)
				found++
				cfg, err := config.LoadFile(path)
				if err != nil {
					t.Errorf("%s: jobs.%s: config %s: %v", wf.path, id, cfgPath, err)
					continue
				}
				for _, w := range cfg.Warnings {
					t.Errorf("%s: jobs.%s: config %s: warning: %v", wf.path, id, cfgPath, w)
				}
				want, _ := filepath.Abs(filepath.Join(root, "baselines"))
				got, _ := filepath.Abs(cfg.BaselinesDir())
				if got != want {
					t.Errorf("%s: config %s keeps its baselines in %s, want the repository's baselines/ (%s)", wf.path, cfgPath, got, want)
				}
			}
		}
	}
	if found == 0 {
		t.Error("no workflow of this repository uses its own action (uses: ./)")
	}
}

// action.yml runs the image built from the repository's Dockerfile.
func TestWorkflowActionImage(t *testing.T) {
	a := loadAction(t)
	if a.Runs.Using != "docker" {
		t.Fatalf("action.yml runs.using = %q, want docker", a.Runs.Using)
	}
	if _, err := os.Stat(filepath.Join(root, a.Runs.Image)); err != nil {
		t.Errorf("action.yml runs.image %q: %v", a.Runs.Image, err)
	}
}

// docs/action.md documents every input and output of action.yml, in its
// tables, and links every example workflow.
func TestWorkflowDocsMatchAction(t *testing.T) {
	a := loadAction(t)
	data, err := os.ReadFile(filepath.Join(root, "docs/action.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	// section is the text under the heading, up to the next heading of its level.
	section := func(heading string) string {
		i := strings.Index(doc, "\n"+heading+"\n")
		if i < 0 {
			t.Errorf("docs/action.md has no %q section", heading)
			return ""
		}
		rest := doc[i+len(heading)+2:]
		if j := strings.Index(rest, "\n## "); j >= 0 {
			rest = rest[:j]
		}
		return rest
	}
	inputs, outputs := section("## Inputs"), section("## Outputs")
	for name, in := range a.Inputs {
		row := "| `" + name + "` | "
		if !strings.Contains(inputs, row) {
			t.Errorf("docs/action.md: no row for input %q in ## Inputs", name)
			continue
		}
		// The default column says what action.yml's default is: the value
		// itself, or, for an empty default, the word "empty".
		line := inputs[strings.Index(inputs, row):]
		line = line[:strings.Index(line, "\n")]
		def := fmt.Sprint(in.Default)
		if in.Default == nil || def == "" {
			def = "empty"
		} else {
			def = "`" + def + "`"
		}
		if cells := strings.Split(line, " | "); len(cells) < 2 || !strings.HasPrefix(cells[1], def) {
			t.Errorf("docs/action.md: input %q: default column %q, want it to start with %s (action.yml)", name, cells[1], def)
		}
	}
	for name := range a.Outputs {
		if !strings.Contains(outputs, "| `"+name+"` | ") {
			t.Errorf("docs/action.md: no row for output %q in ## Outputs", name)
		}
	}
	for _, wf := range loadWorkflows(t) {
		if !wf.own && !strings.Contains(doc, "../"+wf.path) {
			t.Errorf("docs/action.md does not link the example %s", wf.path)
		}
	}
}

// The nightly and the promotion publish the history site to GitHub Pages:
// a job on a GitHub-hosted runner with no more than Pages needs, after the
// job that pushed the history, through the official actions pinned by
// commit SHA, building the site with perfgate report --history.
func TestWorkflowsPublishTheHistorySite(t *testing.T) {
	pinned := regexp.MustCompile(`^actions/(configure-pages|upload-pages-artifact|deploy-pages)@[0-9a-f]{40}$`)
	found := map[string]bool{}
	for _, wf := range loadWorkflows(t) {
		name := filepath.Base(wf.path)
		if name != "nightly.yml" && name != "promote.yml" {
			continue
		}
		job := mapping(mapping(wf.doc["jobs"])["pages"])
		if job == nil {
			t.Errorf("%s: no pages job", wf.path)
			continue
		}
		found[name] = true
		if strings.Contains(flatten(job["runs-on"]), "self-hosted") {
			t.Errorf("%s: jobs.pages runs on a self-hosted runner: it needs no GPU", wf.path)
		}
		perms := mapping(job["permissions"])
		want := map[string]string{"contents": "read", "pages": "write", "id-token": "write"}
		if len(perms) != len(want) {
			t.Errorf("%s: jobs.pages permissions %v, want exactly %v", wf.path, perms, want)
		}
		for k, v := range want {
			if flatten(perms[k]) != v {
				t.Errorf("%s: jobs.pages permissions.%s = %q, want %q", wf.path, k, flatten(perms[k]), v)
			}
		}
		if job["needs"] == nil {
			t.Errorf("%s: jobs.pages does not wait for the job that pushes the history", wf.path)
		}
		uses, builds := map[string]bool{}, false
		for _, st := range steps(job) {
			u := fmt.Sprint(st["uses"])
			if strings.Contains(u, "-pages") {
				if !pinned.MatchString(u) {
					t.Errorf("%s: jobs.pages uses %s: want an official Pages action pinned by its commit SHA", wf.path, u)
				}
				uses[strings.Split(strings.TrimPrefix(u, "actions/"), "@")[0]] = true
			}
			builds = builds || strings.Contains(flatten(st["run"]), "report --history baselines -o site")
		}
		if len(uses) != 3 || !builds {
			t.Errorf("%s: jobs.pages builds the site: %v, uses %v; want the site built and configure-pages, upload-pages-artifact, deploy-pages", wf.path, builds, uses)
		}
	}
	if len(found) != 2 {
		t.Errorf("pages jobs found in %v, want nightly.yml and promote.yml", found)
	}
}
