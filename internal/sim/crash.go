package sim

import "fmt"

// OOMError is the crash Config.OOMTokens stands for: the step loop
// scheduled the prefill of a request whose context (prompt + max_tokens,
// Tokens) is past Limit, as a long prefill's activations that do not fit
// in GPU memory would crash an engine. Its text is the last line a crashed
// vLLM writes, PyTorch's, marked as simulated.
type OOMError struct {
	// Tokens is the request's context, prompt + max_tokens.
	Tokens int
	// Limit is Config.OOMTokens.
	Limit int
}

// ffnDim is the declared model's MLP width (Llama 3.1 8B's), for the size
// of the allocation an OOMError says failed: the gate and up projections'
// bf16 activations over the whole context, a figure of the right order,
// not a model of the allocator.
const ffnDim = 14336

func (e *OOMError) Error() string {
	gib := float64(e.Tokens) * 2 * ffnDim * 2 / (1 << 30)
	return fmt.Sprintf("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %.2f GiB (simulated: a request of %d tokens, past --oom-tokens %d)",
		gib, e.Tokens, e.Limit)
}

func newOOMError(tokens, limit int) error { return &OOMError{Tokens: tokens, Limit: limit} }

// Crashed is closed when the engine has died of an injected crash
// (Config.OOMTokens): by then the listener and every connection are
// closed, as a dying process's are, and nothing is served any more.
// CrashError says why. It is never closed by Close; Close is still to be
// called, to release the rest. The perfgate sim command exits with status
// 1 on it, as a crashed engine's process does.
func (s *Server) Crashed() <-chan struct{} { return s.crashed }

// CrashError is why the engine crashed (an *OOMError), once Crashed is
// closed; nil before, and for a server that did not crash.
func (s *Server) CrashError() error {
	select {
	case <-s.crashed:
		return s.crashErr
	default:
		return nil
	}
}

// crash is the engine's death of err, called from the step loop before it
// aborts its sequences: the listener and every connection are cut first
// (http.Server.Close does not wait for the handlers), so that no stream
// gets an orderly end, then Crashed is closed.
func (s *Server) crash(err error) {
	s.crashOnce.Do(func() {
		s.crashErr = err
		_ = s.http.Close()
		close(s.crashed)
	})
}
