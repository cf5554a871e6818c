package result

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
)

// Digest names what was measured on what: "sha256:" and the hex SHA-256 of the
// canonical JSON of the identity's defining parts — the model asked for, the
// server's engine, version and model list, how the stack was started (kind,
// command, image, image ID, arguments), the client host (CPU model, CPU count,
// architecture, OS) and whether the target was the simulator.
//
// It leaves out what may change without changing the measurement: the config
// hash (a comment edit), the perfgate version, the server's raw identity body
// (it may carry timestamps) and the target's base URL (a port). Two results
// with equal digests measured the same thing, so their figures may be set
// side by side in a history; the server's model list is taken as a set
// (sorted), and an absent list equals an empty one, so a result's digest
// survives a write and a read.
func (id Identity) Digest() string {
	canon := struct {
		Model     string   `json:"model"`
		Engine    string   `json:"engine"`
		Version   string   `json:"version"`
		Models    []string `json:"models"`
		StackKind string   `json:"stack_kind"`
		Command   []string `json:"command"`
		Image     string   `json:"image"`
		ImageID   string   `json:"image_id"`
		Args      []string `json:"args"`
		CPUModel  string   `json:"cpu_model"`
		CPUs      int      `json:"cpus"`
		Arch      string   `json:"arch"`
		OS        string   `json:"os"`
		Simulated bool     `json:"simulated"`
	}{
		Model:     id.Target.Model,
		Engine:    id.Server.Engine,
		Version:   id.Server.Version,
		Models:    nonNil(slices.Sorted(slices.Values(id.Server.Models))),
		StackKind: id.Stack.Kind,
		Command:   nonNil(id.Stack.Command),
		Image:     id.Stack.Image,
		ImageID:   id.Stack.ImageID,
		Args:      nonNil(id.Stack.Args),
		CPUModel:  id.Host.CPUModel,
		CPUs:      id.Host.CPUs,
		Arch:      id.Host.Arch,
		OS:        id.Host.OS,
		Simulated: id.Simulated,
	}
	// A struct of strings, ints, bools and string slices always encodes.
	data, err := json.Marshal(canon)
	if err != nil {
		panic("result: encode identity digest: " + err.Error())
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// nonNil makes an absent list and an empty one encode alike.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ShortHash is a "sha256:..." hash cut to its first 12 hex digits, as
// reports show one; a shorter string as it is.
func ShortHash(h string) string {
	if len(h) > len("sha256:")+12 {
		return h[:len("sha256:")+12]
	}
	return h
}
