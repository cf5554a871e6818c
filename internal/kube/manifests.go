package kube

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// MaxManifestBytes bounds one manifest file: a stack's objects, not data.
const MaxManifestBytes = 4 << 20

// MaxObjects bounds the objects of a stack's manifests.
const MaxObjects = 500

// ReadManifests reads the objects of paths, each a YAML (or JSON) file of
// one or more documents, or a directory of them (*.yaml, *.yml, *.json, in
// name order, not recursive). A document that is empty or a comment is
// skipped; one without apiVersion, kind or metadata.name is an error that
// names its file and place. A kustomize directory is refused with the
// command that renders it: kustomize's Go library imports Go's plugin
// package, which makes the binary bind every cgo symbol when it starts,
// NVML's among them, and perfgate would not start on a machine without
// NVIDIA's driver.
func ReadManifests(paths []string) ([]*unstructured.Unstructured, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("manifests: %w", err)
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		if k := kustomization(p); k != "" {
			return nil, fmt.Errorf("manifests: %s is a kustomize directory (it holds %s): perfgate reads plain manifests; render it first, `kubectl kustomize %s > stack.yaml` (or `kustomize build`), and name the file", p, k, p)
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("manifests: %w", err)
		}
		for _, e := range entries {
			ext := strings.ToLower(filepath.Ext(e.Name()))
			if !e.IsDir() && slices.Contains([]string{".yaml", ".yml", ".json"}, ext) {
				files = append(files, filepath.Join(p, e.Name()))
			}
		}
	}
	var out []*unstructured.Unstructured
	for _, f := range files {
		objs, err := readFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
		if len(out) > MaxObjects {
			return nil, fmt.Errorf("manifests: more than %d objects", MaxObjects)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("manifests: no object in %s", strings.Join(paths, ", "))
	}
	return out, nil
}

// readFile reads the objects of one file.
func readFile(path string) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("manifests: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxManifestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("manifests: %s: %w", path, err)
	}
	if len(data) > MaxManifestBytes {
		return nil, fmt.Errorf("manifests: %s is over %d MiB", path, MaxManifestBytes>>20)
	}
	return decodeManifests(path, data)
}

// decodeManifests decodes the documents of data, the file path's.
func decodeManifests(path string, data []byte) ([]*unstructured.Unstructured, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*unstructured.Unstructured
	for doc := 1; ; doc++ {
		b, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("manifests: %s, document %d: %w", path, doc, err)
		}
		j, err := yaml.YAMLToJSON(b)
		if err != nil {
			return nil, fmt.Errorf("manifests: %s, document %d: %w", path, doc, err)
		}
		var m map[string]any
		if err := json.Unmarshal(j, &m); err != nil {
			return nil, fmt.Errorf("manifests: %s, document %d: want an object with apiVersion and kind", path, doc)
		}
		if len(m) == 0 {
			continue // empty, or comments only
		}
		u := &unstructured.Unstructured{Object: m}
		switch {
		case u.GetAPIVersion() == "" || u.GetKind() == "":
			return nil, fmt.Errorf("manifests: %s, document %d: want an object with apiVersion and kind", path, doc)
		case strings.HasSuffix(u.GetKind(), "List"):
			return nil, fmt.Errorf("manifests: %s, document %d: a %s: give its items as documents of their own", path, doc, u.GetKind())
		case u.GetName() == "":
			return nil, fmt.Errorf("manifests: %s, document %d: %s has no metadata.name", path, doc, u.GetKind())
		}
		// Decoded again as Kubernetes does, integers as integers.
		if err := u.UnmarshalJSON(j); err != nil {
			return nil, fmt.Errorf("manifests: %s, document %d: %w", path, doc, err)
		}
		out = append(out, u)
		if len(out) > MaxObjects {
			return nil, fmt.Errorf("manifests: %s: more than %d objects", path, MaxObjects)
		}
	}
}

// kustomization is the kustomization file dir holds, under one of the
// names kustomize recognises, or "".
func kustomization(dir string) string {
	for _, name := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil && st.Mode().IsRegular() {
			return name
		}
	}
	return ""
}
