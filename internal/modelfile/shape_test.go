package modelfile

import (
	"errors"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// Read chooses the format by extension, or by GGUF's magic where the name
// says nothing.
func TestReadChoosesTheFormat(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"small.gguf", "SMALL.GGUF", "small-model"} {
		path := writeFile(t, dir, name, smallGGUF())
		s, err := Read(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := smallGGUFShape
		want.Source = "GGUF header of " + name
		if !reflect.DeepEqual(s, want) {
			t.Errorf("%s:\ngot  %+v\nwant %+v", name, s, want)
		}
	}

	// A GGUF file named .safetensors is read as safetensors, and refused.
	path := writeFile(t, dir, "model.safetensors", smallGGUF())
	if _, err := Read(path); err == nil || !strings.HasPrefix(err.Error(), "read safetensors "+path) {
		t.Errorf("GGUF named .safetensors: %v", err)
	}

	for _, c := range []struct{ name, content, want string }{
		{"weights.bin", "PK\x03\x04 a pickle in a zip", "not a GGUF file (.gguf, or starting with \"GGUF\"), a safetensors file (.safetensors), model.safetensors.index.json, or a directory of safetensors files"},
		{"tiny", "GG", "not a GGUF file"},
		{"empty", "", "not a GGUF file"},
	} {
		path := writeFile(t, dir, c.name, []byte(c.content))
		_, err := Read(path)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "read model "+path+": ") {
			t.Errorf("%s: %v", c.name, err)
		}
	}

	_, err := Read(filepath.Join(dir, "missing.gguf"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// A named pipe is refused, not opened and waited on for ever.
func TestReadRefusesAPipe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.gguf")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	_, err := Read(path)
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("named pipe: %v", err)
	}
}
