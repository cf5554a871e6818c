package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/safeio"
	"github.com/perfgate/perfgate/internal/textsafe"
)

// Bounds on what perfgate init reads of a server.
const (
	// initTimeout bounds the request to /v1/models, connect to last byte.
	initTimeout = 10 * time.Second
	// initMaxModel is the longest model id taken: Hugging Face ids are
	// at most 96 characters, a path to weights a few hundred.
	initMaxModel = 512
	// initListed is how many of the server's other models the config
	// names in a comment.
	initListed = 20
)

// initOptions are perfgate init's flags, and the system it runs in.
type initOptions struct {
	sys    *system
	quick  config.Quick // target, api, model, headers
	output string
	force  bool
}

func newInitCmd(sys *system) *cobra.Command {
	o := initOptions{sys: sys}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a commented perfgate.yaml for a running server",
		Long: `init asks a running OpenAI-compatible server which models it serves
(GET /v1/models) and writes a starting perfgate.yaml for it: the target with
the first model filled in (the others listed in a comment), the engine guessed
from the models' owner, a closed-loop and a Poisson scenario over a synthetic
workload, SLOs, and the gates at their defaults, every section explained in
comments. perfgate validate accepts it as written; edit it from there.

--header is sent to the server and written to the config as given: write a
credential as ${VAR} (--header 'Authorization: Bearer ${OPENAI_API_KEY}'),
which init and every run read from the environment. A literal value under a
name that looks secret (Authorization, *-Key, *Token) is sent but not written:
the file reads it from ${PERFGATE_API_KEY} instead, and init says so.

With --model the server is not asked at all: init works offline and the
engine is left to auto. An existing file is kept unless --force.`,
		Example: `  perfgate init --target http://127.0.0.1:8000
  perfgate init --target https://api.openai.com --header 'Authorization: Bearer ${OPENAI_API_KEY}' --model gpt-4o-mini -o hosted.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return initRun(cmd.Context(), &o)
		},
	}
	f := cmd.Flags()
	addQuickFlags(f, &o.quick, quickTarget)
	f.StringVarP(&o.output, "output", "o", "perfgate.yaml", "the config file to write")
	f.BoolVar(&o.force, "force", false, "overwrite the config file if it exists")
	return cmd
}

// initRun is perfgate init: the server asked (unless --model), the config
// written and checked, the next step said on stderr.
func initRun(ctx context.Context, o *initOptions) error {
	stderr := o.sys.stderr
	q := o.quick
	q.Target = strings.TrimRight(q.Target, "/")
	if q.Target == "" {
		q.Target = config.DefaultBaseURL
	}
	if err := q.Check(); err != nil {
		return exit.UsageError(err)
	}
	if _, err := os.Lstat(o.output); !o.force && !errors.Is(err, fs.ErrNotExist) {
		return exit.UsageError(fmt.Errorf("--output: %s exists; --force overwrites it", o.output))
	}
	headers, _ := config.ParseHeaders(q.Headers)
	v := config.StarterValues{BaseURL: q.Target, API: cmp.Or(q.API, config.DefaultAPI), Model: q.Model, Engine: config.EngineAuto}
	var err error
	var literals []string
	if v.Headers, literals, err = initHeaders(headers, stderr); err != nil {
		return err
	}
	if q.Model == "" {
		models, err := o.listModels(ctx, q.Target, headers, literals)
		if err != nil {
			return err
		}
		v.Model, v.Engine = models[0].ID, config.EngineOwning(models[0].OwnedBy)
		for _, m := range models[1:] {
			if len(v.Others) == initListed {
				v.More = len(models) - 1 - initListed
				break
			}
			v.Others = append(v.Others, m.ID)
		}
	}
	text, err := config.RenderStarter(v)
	if err != nil {
		return err
	}
	// What is written must be what perfgate validate accepts: checked
	// before it replaces anything. A --target that is no URL stops here.
	if _, err := config.Parse(text, o.output); err != nil {
		return exit.UsageError(fmt.Errorf("the config init would write is not valid (check --target and --header):\n%w", err))
	}
	if err := safeio.WriteFile(o.output, text, 0o644); err != nil {
		return exit.UsageError(fmt.Errorf("--output: %w", err))
	}
	fmt.Fprintf(stderr, "wrote %s for model %s", o.output, v.Model)
	if v.Engine != config.EngineAuto {
		fmt.Fprintf(stderr, " (engine %s)", v.Engine)
	}
	fmt.Fprintf(stderr, "; next: perfgate run -c %s\n", o.output)
	return nil
}

// listModels asks base's /v1/models, with headers (their ${VAR} read from
// the environment), and returns the models it lists with a usable id, in
// its order; an error when there is none, or no answer. An id holding a
// ${VAR}'s value or one of literals (credentials given as they are, which
// the config does not hold), as it is or URL-escaped, is skipped, and a
// redirect's Location has them redacted: the server echoes what it was
// sent.
func (o *initOptions) listModels(ctx context.Context, base string, headers map[string]string, literals []string) ([]client.Model, error) {
	url := base + "/v1/models"
	// The one rule for ${VAR} in headers (config.Target.ExpandHeaders): the
	// same syntax, the same refusals (GITHUB_TOKEN and its kind) as a run.
	expanded, err := config.Target{Headers: headers}.ExpandHeaders(o.sys.lookupEnv)
	if err != nil {
		return nil, exit.UsageError(fmt.Errorf("--header: %w", err))
	}
	expanded = expanded.WithSecrets(literals...)
	hdr := map[string]string{}
	for _, name := range expanded.Names() {
		hdr[name] = expanded.Values[name]
	}
	// The run's own client: the same redirect refusal, bounded read and
	// redaction (the server's word may echo the key).
	c, err := client.New(client.Options{BaseURL: base, Headers: hdr, Redact: expanded.Redact, Timeout: initTimeout, MaxConns: 1})
	if err != nil {
		return nil, exit.UsageError(fmt.Errorf("--target: %w", err))
	}
	defer c.CloseIdleConnections()
	const hint = " (give --model to write the config without asking the server)"
	list, err := c.Models(ctx)
	var ce *client.Error
	switch {
	case err == nil:
	case errors.As(err, &ce) && ce.Kind == client.ErrHTTP && (ce.Status == http.StatusUnauthorized || ce.Status == http.StatusForbidden):
		return nil, exit.RunError(fmt.Errorf("ask %s: the server refused the credentials (HTTP %d); give them with --header 'Authorization: Bearer ${VAR}'", url, ce.Status))
	case errors.Is(err, client.ErrNotAList):
		return nil, exit.RunError(fmt.Errorf("ask %s: the answer is not a list of models%s", url, hint))
	default:
		return nil, exit.RunError(fmt.Errorf("ask %s: %w%s", url, err, hint))
	}
	var out []client.Model
	skipped, secret := 0, 0
	for _, m := range list {
		switch {
		case !safeModel(m.ID):
			skipped++
		case expanded.Redact(m.ID) != m.ID: // the server echoes the key
			secret++
		default:
			out = append(out, m)
		}
	}
	if skipped > 0 {
		fmt.Fprintf(o.sys.stderr, "warning: %s lists %d model id(s) that are empty, too long or hold control or quote characters; skipped\n", url, skipped)
	}
	if secret > 0 {
		fmt.Fprintf(o.sys.stderr, "warning: %s lists %d model id(s) holding a --header value; skipped\n", url, secret)
	}
	if len(out) == 0 {
		return nil, exit.RunError(fmt.Errorf("ask %s: the server lists no usable model%s", url, hint))
	}
	return out, nil
}

// safeModel says whether a model id from a server may go into the config
// and onto the terminal as it is: 1 to initMaxModel bytes of valid UTF-8,
// no control or format characters, no quotes or backslashes, no spaces at
// its ends.
func safeModel(id string) bool {
	return id != "" && len(id) <= initMaxModel && utf8.ValidString(id) && textsafe.Line(id) == id &&
		!strings.ContainsAny(id, "\"\\`'") && strings.TrimSpace(id) == id
}

// headerName is what init takes as a header's name (an RFC 7230 token);
// the template quotes it, since a token may begin with # or hold ' and |.
var headerName = regexp.MustCompile(`^[A-Za-z0-9!#$%&'*+.^_|~-]+$`)

// initHeaders are the headers as the config will hold them: as given when
// the value reads its secret from the environment (${VAR}) or the name
// does not look secret; otherwise the literal, a credential, is replaced by
// ${PERFGATE_API_KEY} (after "Bearer ", if it had one), with a warning. A
// value a run would refuse ($KEY, ${KEY:-x}: config.HeaderVars, the one
// rule) is refused here too, rather than rewritten. literals are the
// credentials so kept out of the config, for listModels to redact: the
// whole value and, after "Bearer ", the token.
func initHeaders(headers map[string]string, stderr io.Writer) (out []config.StarterHeader, literals []string, err error) {
	for _, name := range slices.Sorted(maps.Keys(headers)) {
		if !headerName.MatchString(name) {
			return nil, nil, exit.UsageError(fmt.Errorf("--header: %q is not a valid header name", textsafe.Cut(name, 64)))
		}
		value := headers[name]
		vars, err := config.HeaderVars(name, value)
		if err != nil {
			return nil, nil, exit.UsageError(fmt.Errorf("--header: %w", err))
		}
		if config.LooksSecret(name) && len(vars) == 0 {
			sent := strings.ReplaceAll(value, "$$", "$") // no ${VAR}: $$ is the one $ left
			literals = append(literals, sent)
			prefix := ""
			if scheme, token, ok := strings.Cut(sent, " "); ok && strings.EqualFold(scheme, "bearer") {
				prefix = scheme + " "
				literals = append(literals, strings.TrimSpace(token))
			}
			value = prefix + "${PERFGATE_API_KEY}"
			fmt.Fprintf(stderr, "warning: --header %s: its value looks like a credential and is not written to the config; the config reads it from ${PERFGATE_API_KEY}, so export PERFGATE_API_KEY before perfgate run\n", name)
		}
		out = append(out, config.StarterHeader{Name: name, Value: value})
	}
	return out, literals, nil
}
