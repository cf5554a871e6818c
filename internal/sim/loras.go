package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
)

// loraSet is the adapters the simulator serves (Config.Loras, and those
// loaded at run time), as vLLM's runtime LoRA endpoints change them. It is
// nil without adapters: every model name is then the base model.
type loraSet struct {
	mu    sync.Mutex
	names []string
}

func newLoraSet(names []string) *loraSet {
	if len(names) == 0 {
		return nil
	}
	return &loraSet{names: slices.Clone(names)}
}

// has reports whether name is served.
func (l *loraSet) has(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Contains(l.names, name)
}

// list is the adapters served, in the order they were added.
func (l *loraSet) list() []string {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.names)
}

// maxLoraBody bounds a load or unload request's body.
const maxLoraBody = 64 << 10

// loraRequest is the body of vLLM's /v1/load_lora_adapter and
// /v1/unload_lora_adapter.
type loraRequest struct {
	Name string `json:"lora_name"`
	Path string `json:"lora_path"`
}

// loraCall reads a load or unload request; false after answering 400.
func loraCall(w http.ResponseWriter, r *http.Request, needPath bool) (loraRequest, bool) {
	var req loraRequest
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxLoraBody))
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	switch {
	case err != nil:
		writeError(w, http.StatusBadRequest, "BadRequestError", "invalid JSON body: "+err.Error())
	case req.Name == "":
		writeError(w, http.StatusBadRequest, "BadRequestError", "lora_name: required")
	case needPath && req.Path == "":
		writeError(w, http.StatusBadRequest, "BadRequestError", "lora_path: required")
	default:
		return req, true
	}
	return req, false
}

// loadLora is vLLM's POST /v1/load_lora_adapter: the adapter is served
// from now on, not yet resident (its first request loads it).
func (s *Server) loadLora(w http.ResponseWriter, r *http.Request) {
	req, ok := loraCall(w, r, true)
	if !ok {
		return
	}
	s.loras.mu.Lock()
	defer s.loras.mu.Unlock()
	if req.Name == s.cfg.Model || slices.Contains(s.loras.names, req.Name) {
		writeError(w, http.StatusBadRequest, "BadRequestError", fmt.Sprintf("The lora adapter '%s' has already been loaded.", req.Name))
		return
	}
	if len(s.loras.names) >= maxServedLoras {
		writeError(w, http.StatusBadRequest, "BadRequestError", fmt.Sprintf("perfgate sim serves at most %d adapters", maxServedLoras))
		return
	}
	s.loras.names = append(s.loras.names, req.Name)
	w.WriteHeader(http.StatusOK)
	_, _ = fmt.Fprintf(w, "Success: LoRA adapter '%s' added successfully.", req.Name)
}

// unloadLora is vLLM's POST /v1/unload_lora_adapter: the adapter is no
// longer served, and leaves its slot at the next step.
func (s *Server) unloadLora(w http.ResponseWriter, r *http.Request) {
	req, ok := loraCall(w, r, false)
	if !ok {
		return
	}
	s.loras.mu.Lock()
	i := slices.Index(s.loras.names, req.Name)
	if i >= 0 {
		s.loras.names = slices.Delete(s.loras.names, i, i+1)
	}
	s.loras.mu.Unlock()
	if i < 0 {
		writeError(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("The lora adapter '%s' cannot be found.", req.Name))
		return
	}
	s.eng.evict(req.Name)
	w.WriteHeader(http.StatusOK)
	_, _ = fmt.Fprintf(w, "Success: LoRA adapter '%s' removed successfully.", req.Name)
}

// maxServedLoras bounds the adapters loaded at run time.
const maxServedLoras = 1024
