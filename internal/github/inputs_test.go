package github

import (
	"fmt"
	"os"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// actionYAML is the part of action.yml the tables must match.
type actionYAML struct {
	Name     string `yaml:"name"`
	Branding struct {
		Icon  string `yaml:"icon"`
		Color string `yaml:"color"`
	} `yaml:"branding"`
	Inputs map[string]struct {
		Description string  `yaml:"description"`
		Required    *bool   `yaml:"required"`
		Default     *string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Description string `yaml:"description"`
	} `yaml:"outputs"`
	Runs struct {
		Using string   `yaml:"using"`
		Image string   `yaml:"image"`
		Args  []string `yaml:"args"`
	} `yaml:"runs"`
}

// actionOrder is action.yml with its inputs and outputs in file order.
type actionOrder struct {
	Inputs  yaml.MapSlice `yaml:"inputs"`
	Outputs yaml.MapSlice `yaml:"outputs"`
}

// TestActionYAML checks that action.yml at the repository root says what the
// Inputs and Outputs tables say: change one, change the other.
func TestActionYAML(t *testing.T) {
	raw, err := os.ReadFile("../../action.yml")
	require.NoError(t, err)
	var a actionYAML
	require.NoError(t, yaml.Unmarshal(raw, &a), "parsing action.yml")
	var order actionOrder
	require.NoError(t, yaml.Unmarshal(raw, &order), "parsing action.yml")

	assert.Equal(t, "perfgate", a.Name, "action.yml name")
	assert.Equal(t, "docker", a.Runs.Using, "action.yml runs.using")
	assert.Equal(t, "Dockerfile", a.Runs.Image, "action.yml runs.image")
	assert.Equal(t, []string{"action"}, a.Runs.Args, "action.yml runs.args")

	for _, in := range Inputs {
		got, ok := a.Inputs[in.Name]
		if !assert.True(t, ok, "input %s is in Inputs but not in action.yml", in.Name) {
			continue
		}
		assert.Equal(t, in.Description, got.Description, "input %s: description in action.yml", in.Name)
		if assert.NotNil(t, got.Default, "input %s: no default in action.yml, want %q", in.Name, in.Default) {
			assert.Equal(t, in.Default, *got.Default, "input %s: default in action.yml", in.Name)
		}
		if assert.NotNil(t, got.Required, "input %s: no required in action.yml", in.Name) {
			assert.False(t, *got.Required, "input %s: required in action.yml", in.Name)
		}
	}
	for name := range a.Inputs {
		_, ok := lookup(Inputs, func(in Input) string { return in.Name }, name)
		assert.True(t, ok, "input %s is in action.yml but not in Inputs", name)
	}
	assert.Equal(t, names(Inputs, func(in Input) string { return in.Name }), keys(order.Inputs), "the order of the inputs")

	for _, out := range Outputs {
		got, ok := a.Outputs[out.Name]
		if !assert.True(t, ok, "output %s is in Outputs but not in action.yml", out.Name) {
			continue
		}
		assert.Equal(t, out.Description, got.Description, "output %s: description in action.yml", out.Name)
	}
	for name := range a.Outputs {
		assert.True(t, isOutput(name), "output %s is in action.yml but not in Outputs", name)
	}
	assert.Equal(t, names(Outputs, func(o Output) string { return o.Name }), keys(order.Outputs), "the order of the outputs")
}

// TestInputsTable checks the table itself: unique names and flags, and bool
// defaults that Args would accept.
func TestInputsTable(t *testing.T) {
	seenName, seenFlag := map[string]bool{}, map[string]bool{}
	for _, in := range Inputs {
		assert.False(t, seenName[in.Name], "input %s listed twice", in.Name)
		assert.False(t, seenFlag[in.Flag], "flag %s mapped twice", in.Flag)
		seenName[in.Name], seenFlag[in.Flag] = true, true
		assert.NotEmpty(t, in.Description, "input %s has no description", in.Name)
		if in.Bool {
			assert.Contains(t, []string{"true", "false"}, in.Default, "bool input %s default", in.Name)
		}
	}
	for _, name := range []string{OutputVerdict, OutputResult, OutputCommentURL, OutputReport} {
		assert.True(t, isOutput(name), "output constant %s is not in Outputs", name)
	}
	assert.Len(t, Outputs, 4)
}

func lookup[T any](list []T, name func(T) string, want string) (T, bool) {
	for _, v := range list {
		if name(v) == want {
			return v, true
		}
	}
	var zero T
	return zero, false
}

func names[T any](list []T, name func(T) string) []string {
	var out []string
	for _, v := range list {
		out = append(out, name(v))
	}
	return out
}

func keys(m yaml.MapSlice) []string {
	var out []string
	for _, item := range m {
		out = append(out, fmt.Sprint(item.Key))
	}
	return out
}
