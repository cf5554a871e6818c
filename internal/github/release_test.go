package github_test

// Keeps the release machinery honest: every action a workflow or a doc uses is
// pinned by commit SHA with its version beside it, the released image's final
// stage (Dockerfile.release) is the Dockerfile's, the release workflow runs the
// GoReleaser that tools/goreleaser pins, and the script that points a
// release's action.yml at its image changes that one line and nothing else.

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	// usesLine is a `uses: owner/repo[/path]@ref  # comment` in YAML or in a
	// doc's code block.
	usesLine = regexp.MustCompile(`uses:\s*["']?([A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+)@([^\s"'#]+)["']?(?:\s*#\s*(\S+))?`)
	fullSHA  = regexp.MustCompile(`^[0-9a-f]{40}$`)
	semver   = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`)
)

// pinnedFiles are the files whose `uses:` lines must pin by SHA: the
// workflows this repository runs, the examples, and the docs.
func pinnedFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pat := range []string{
		".github/workflows/*.yml", ".github/workflows/*.yaml",
		"examples/workflows/*.yml", "examples/workflows/*.yaml",
		"docs/*.md", "README.md",
	} {
		m, err := filepath.Glob(filepath.Join(root, pat))
		require.NoError(t, err)
		files = append(files, m...)
	}
	sort.Strings(files)
	require.NotEmpty(t, files)
	return files
}

// TestActionsPinnedBySHA: a tag can be moved to other code; a commit SHA
// cannot. Every third-party action is pinned by its full SHA with the version
// it is in a comment (`@<40 hex> # v4.2.2`), and one action has one pin
// across the repository, so that an upgrade changes them all. perfgate's own
// action is the exception: it has no release SHA to pin until the first
// release, and docs/action.md says how to pin it.
func TestActionsPinnedBySHA(t *testing.T) {
	type pin struct{ ref, version, where string }
	pins := map[string]pin{}
	found := 0
	for _, name := range pinnedFiles(t) {
		rel, _ := filepath.Rel(root, name)
		f, err := os.Open(name)
		require.NoError(t, err)
		sc := bufio.NewScanner(f)
		for n := 1; sc.Scan(); n++ {
			m := usesLine.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			action, ref, version := m[1], m[2], m[3]
			where := rel + ":" + strconv.Itoa(n)
			if action == "perfgate/perfgate" || strings.HasPrefix(action, "docker://") {
				continue
			}
			found++
			if !fullSHA.MatchString(ref) {
				t.Errorf("%s: uses %s@%s: pin a full commit SHA (`%s@<40 hex digits> # vX.Y.Z`), not a tag or branch", where, action, ref, action)
				continue
			}
			if !semver.MatchString(version) {
				t.Errorf("%s: uses %s@%s: the version it is goes in a comment after it, `# vX.Y.Z`; found %q", where, action, ref, version)
				continue
			}
			if prev, ok := pins[action]; ok && (prev.ref != ref || prev.version != version) {
				t.Errorf("%s: uses %s@%s # %s, but %s pins %s # %s: one action, one pin", where, action, ref, version, prev.where, prev.ref, prev.version)
				continue
			}
			pins[action] = pin{ref, version, where}
		}
		require.NoError(t, sc.Err())
		require.NoError(t, f.Close())
	}
	assert.NotZero(t, found, "no uses: lines found: is the pattern broken?")
}

// finalStage is a Dockerfile from its `# --- final stage ---` marker on.
func finalStage(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, name))
	require.NoError(t, err)
	const marker = "\n# --- final stage ---\n"
	i := strings.Index(string(raw), marker)
	require.GreaterOrEqual(t, i, 0, "%s has no %q marker", name, strings.TrimSpace(marker))
	return string(raw[i:])
}

// TestDockerfileReleaseFinalStage: the released image (Dockerfile.release,
// from GoReleaser's binaries) and the image the action builds from source
// (Dockerfile) are one image: the same final stage, line for line.
func TestDockerfileReleaseFinalStage(t *testing.T) {
	assert.Equal(t, finalStage(t, "Dockerfile"), finalStage(t, "Dockerfile.release"),
		"Dockerfile.release's final stage differs from Dockerfile's: change both together")
}

// TestReleaseGoreleaserVersion: the release workflow runs the GoReleaser that
// `make check-release` checks the config with.
func TestReleaseGoreleaserVersion(t *testing.T) {
	gomod, err := os.ReadFile(filepath.Join(root, "tools/goreleaser/go.mod"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^\s*github\.com/goreleaser/goreleaser/v2 (v\S+)`).FindSubmatch(gomod)
	require.NotNil(t, m, "tools/goreleaser/go.mod requires no github.com/goreleaser/goreleaser/v2")
	want := string(m[1])

	raw, err := os.ReadFile(filepath.Join(root, ".github/workflows/release.yml"))
	require.NoError(t, err)
	var wf map[string]any
	require.NoError(t, yaml.Unmarshal(raw, &wf))
	var got []string
	for _, job := range mapping(wf["jobs"]) {
		for _, st := range steps(mapping(job)) {
			if uses, _ := st["uses"].(string); strings.HasPrefix(uses, "goreleaser/goreleaser-action@") {
				v, _ := mapping(st["with"])["version"].(string)
				got = append(got, v)
			}
		}
	}
	assert.Equal(t, []string{want}, got, "release.yml's goreleaser-action version, want tools/goreleaser/go.mod's")
}

// TestPinActionImage runs .github/release/pin-action-image.sh on a copy of
// action.yml: the released action runs the image by tag and digest, and takes
// exactly the inputs, outputs and args of the action that builds the
// Dockerfile. Bad images and an action.yml already pinned are refused.
func TestPinActionImage(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	script, err := filepath.Abs(filepath.Join(root, ".github/release/pin-action-image.sh"))
	require.NoError(t, err)
	orig, err := os.ReadFile(filepath.Join(root, "action.yml"))
	require.NoError(t, err)

	dir := t.TempDir()
	file := filepath.Join(dir, "action.yml")
	require.NoError(t, os.WriteFile(file, orig, 0o644))
	pin := func(image string) (string, error) {
		out, err := exec.Command(bash, script, file, image).CombinedOutput()
		return string(out), err
	}

	const image = "ghcr.io/perfgate/perfgate:v1.2.3@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, bad := range []string{
		"ghcr.io/perfgate/perfgate:v1.2.3",                            // no digest
		"ghcr.io/perfgate/perfgate@sha256:" + strings.Repeat("0", 64), // no tag
		"ghcr.io/someone/else:v1.2.3@sha256:" + strings.Repeat("0", 64),
		"ghcr.io/perfgate/perfgate:main@sha256:" + strings.Repeat("0", 64),
		image + "\n  args: [sh]",
	} {
		out, err := pin(bad)
		assert.Error(t, err, "pin-action-image.sh %q: want a refusal", bad)
		assert.Contains(t, out, "is not ghcr.io/perfgate/perfgate:vX.Y.Z@sha256:", "pin-action-image.sh %q", bad)
	}
	got, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, string(orig), string(got), "a refused image changed action.yml")

	out, err := pin(image)
	require.NoError(t, err, out)
	pinned, err := os.ReadFile(file)
	require.NoError(t, err)

	var before, after actionYAML
	require.NoError(t, yaml.Unmarshal(orig, &before))
	require.NoError(t, yaml.Unmarshal(pinned, &after))
	assert.Equal(t, "docker", after.Runs.Using)
	assert.Equal(t, "docker://"+image, after.Runs.Image)
	assert.Equal(t, before.Runs.Args, after.Runs.Args)
	assert.Equal(t, before.Inputs, after.Inputs)
	assert.Equal(t, before.Outputs, after.Outputs)
	assert.Equal(t, strings.Replace(string(orig), "  image: Dockerfile\n", "  image: docker://"+image+"\n", 1), string(pinned),
		"pin-action-image.sh changed more than the image line")

	out, err = pin(image)
	assert.Error(t, err, "pinning an action.yml already pinned: want a refusal")
	assert.Contains(t, out, "want exactly one line '  image: Dockerfile'")
}

// actionYAML is the part of action.yml TestPinActionImage compares.
type actionYAML struct {
	Inputs  map[string]map[string]any `yaml:"inputs"`
	Outputs map[string]map[string]any `yaml:"outputs"`
	Runs    struct {
		Using string   `yaml:"using"`
		Image string   `yaml:"image"`
		Args  []string `yaml:"args"`
	} `yaml:"runs"`
}
