package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/perfgate/perfgate/internal/httpguard"
)

// ReloadAdapter unloads the LoRA adapter name and loads it again from
// path, through vLLM's runtime endpoints (POST /v1/unload_lora_adapter and
// /v1/load_lora_adapter; the server needs
// VLLM_ALLOW_RUNTIME_LORA_UPDATING=True), so that the next request to it
// finds it freshly loaded. An unload the server refuses because the adapter
// is not loaded (400 or 404) is no error; any other refusal is an *Error
// with the server's message, its text cleaned of Options.Redact's secrets.
func (c *Client) ReloadAdapter(ctx context.Context, name, path string) error {
	err := c.adapterCall(ctx, "/v1/unload_lora_adapter", map[string]string{"lora_name": name})
	var ce *Error
	if err != nil && !(errors.As(err, &ce) && ce.Kind == ErrHTTP && (ce.Status == http.StatusNotFound || ce.Status == http.StatusBadRequest)) {
		return fmt.Errorf("unload adapter %s: %w", name, c.cleaned(err))
	}
	if err := c.adapterCall(ctx, "/v1/load_lora_adapter", map[string]string{"lora_name": name, "lora_path": path}); err != nil {
		return fmt.Errorf("load adapter %s from %s: %w", name, path, c.cleaned(err))
	}
	return nil
}

// cleaned is err with an *Error's text cleaned of Options.Redact's secrets.
func (c *Client) cleaned(err error) error {
	var ce *Error
	if errors.As(err, &ce) {
		return c.redactError(ce)
	}
	return err
}

// adapterCall POSTs body as JSON to the server's path; a non-2xx answer
// is an *Error (ErrHTTP, with its status and message).
func (c *Client) adapterCall(ctx context.Context, path string, body map[string]string) error {
	rctx, cancel := c.requestContext(ctx)
	defer cancel()
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	hreq, err := http.NewRequestWithContext(rctx, http.MethodPost, c.base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	for k, v := range c.header {
		hreq.Header[k] = v
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if c.host != "" {
		hreq.Host = c.host
	}
	hresp, err := c.hc.Do(hreq)
	if err != nil {
		return c.classify(rctx, ErrConnect, err)
	}
	defer hresp.Body.Close()
	if re := httpguard.Redirected(hresp); re != nil {
		re.Redact = c.opts.Redact
		return &Error{Kind: ErrHTTP, Status: hresp.StatusCode, Err: re}
	}
	msg, _ := io.ReadAll(io.LimitReader(hresp.Body, maxErrorBody))
	if hresp.StatusCode < 200 || hresp.StatusCode > 299 {
		return &Error{Kind: ErrHTTP, Status: hresp.StatusCode, Message: serverMessage(msg)}
	}
	return nil
}
