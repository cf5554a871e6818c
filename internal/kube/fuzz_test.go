package kube

import (
	"testing"
)

// Whatever a manifest file holds, decoding it ends with objects that have
// an apiVersion, a kind and a name, or an error: never a panic, never more
// than MaxObjects.
func FuzzDecodeManifests(f *testing.F) {
	f.Add([]byte(manifests))
	f.Add([]byte("apiVersion: v1\nkind: Service\nmetadata: {name: x}\n---\n---\n# c\n"))
	f.Add([]byte(`{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}`))
	f.Add([]byte("a: &a [*a, *a]\n"))
	f.Add([]byte("apiVersion: v1\nkind: List\nmetadata: {name: x}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, err := decodeManifests("f.yaml", data)
		if err != nil {
			return
		}
		if len(objs) > MaxObjects {
			t.Fatalf("%d objects", len(objs))
		}
		for _, o := range objs {
			if o.GetAPIVersion() == "" || o.GetKind() == "" || o.GetName() == "" {
				t.Fatalf("object without apiVersion, kind or name: %v", o.Object)
			}
		}
	})
}
