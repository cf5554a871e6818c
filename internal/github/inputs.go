package github

// Input is one input of the action and the `perfgate gate` flag it maps to, one
// to one. The table [Inputs] is the single source of the action's interface:
// action.yml must say the same (a test compares them), and [Action.Args] turns
// the inputs into gate arguments from it.
type Input struct {
	Name        string // action input name, e.g. "working-directory"
	Flag        string // the command's flag without dashes, e.g. "workdir"; "" for mode, which picks the command
	Only        string // the one mode (command) that takes it, gate or ab; "" for both
	Default     string // default in action.yml ("" for none)
	Description string // description in action.yml
	Bool        bool   // a true/false input (passed as --flag=true|false)
}

// Inputs are the action's inputs in the order action.yml lists them and
// [Action.Args] passes them.
var Inputs = []Input{
	{
		Name:        "mode",
		Default:     ModeGate,
		Description: "gate: run and compare with the promoted baselines (perfgate gate); ab: measure base-config and config interleaved on this runner and compare them pair by pair (perfgate ab).",
	},
	{
		Name:        "config",
		Flag:        "config",
		Default:     "perfgate.yaml",
		Description: "The perfgate config file, relative to working-directory.",
	},
	{
		Name:        "scenarios",
		Flag:        "scenario",
		Description: "Comma-separated names of the scenarios to gate; empty gates all of them.",
	},
	{
		Name:        "baselines",
		Flag:        "baselines",
		Only:        ModeGate,
		Description: "Baselines directory; empty uses compare.baselines of the config (mode gate).",
	},
	{
		Name:        "base-config",
		Flag:        "base",
		Only:        ModeAB,
		Description: "The base arm's config, relative to working-directory: the base branch's perfgate.yaml, checked out beside the pull request's (mode ab).",
	},
	{
		Name:        "ab-mode",
		Flag:        "mode",
		Only:        ModeAB,
		Description: "How the two stacks are held: co-resident or swap; empty uses ab.mode of the config (mode ab).",
	},
	{
		Name:        "github-token",
		Flag:        "github-token",
		Default:     "${{ github.token }}",
		Description: "Token used to post the pull request comment; it needs pull-requests: write.",
	},
	{
		Name:        "comment",
		Flag:        "comment",
		Default:     "true",
		Description: "Post or update the sticky pull request comment (true or false).",
		Bool:        true,
	},
	{
		Name:        "fail-on",
		Flag:        "fail-on",
		Default:     "config",
		Description: "What fails the step: regression, inconclusive, never, or config (regression, plus inconclusive when compare.on_inconclusive is fail).",
	},
	{
		Name:        "working-directory",
		Flag:        "workdir",
		Default:     ".",
		Description: "Directory to run in.",
	},
	{
		Name:        "result",
		Flag:        "output",
		Default:     "result.json",
		Description: "Result file to write.",
	},
	{
		Name:        "report",
		Flag:        "report",
		Default:     "perfgate-report.json",
		Description: "Report file to write: what `perfgate report` renders, merges and comments from.",
	},
	{
		Name:        "html",
		Flag:        "html",
		Default:     "perfgate-report.html",
		Description: "Self-contained HTML report to write; empty for none.",
	},
	{
		Name:        "title",
		Flag:        "title",
		Description: "Title of this job's section when reports are merged, e.g. the model or the GPU.",
	},
}

// The action's modes (the mode input): the perfgate command it runs.
const (
	ModeGate = "gate"
	ModeAB   = "ab"
)

// Output is one output of the action: a value later steps read as
// steps.<id>.outputs.<name>. The table [Outputs] must match action.yml, and
// [Action.SetOutput] accepts only its names.
type Output struct {
	Name        string // output name, e.g. "verdict"
	Description string // description in action.yml
}

// The action's output names, for [Action.SetOutput].
const (
	OutputVerdict    = "verdict"     // pass, regression or inconclusive; error when the run failed
	OutputResult     = "result"      // path of the result file
	OutputCommentURL = "comment-url" // URL of the PR comment, empty when none was posted
	OutputReport     = "report"      // path of the report file
)

// Outputs are the action's outputs in the order action.yml lists them.
var Outputs = []Output{
	{Name: OutputVerdict, Description: "pass, regression or inconclusive; error when the run failed."},
	{Name: OutputResult, Description: "Path of the result file."},
	{Name: OutputCommentURL, Description: "URL of the pull request comment; empty when none was posted."},
	{Name: OutputReport, Description: "Path of the report file."},
}

// isOutput reports whether name is one of [Outputs].
func isOutput(name string) bool {
	for _, o := range Outputs {
		if o.Name == name {
			return true
		}
	}
	return false
}
