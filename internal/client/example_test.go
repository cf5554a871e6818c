package client_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/workload"
)

func ExampleClient_Do() {
	// A stand-in for an OpenAI-compatible server.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"delta":{"role":"assistant","content":null}}]}`+"\n\n")
		io.WriteString(w, `data: {"choices":[{"delta":{"content":"Hello"}}]}`+"\n\n")
		io.WriteString(w, `data: {"choices":[{"delta":{"content":" world"},"finish_reason":"stop"}]}`+"\n\n")
		io.WriteString(w, `data: {"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2}}`+"\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()

	c, err := client.New(client.Options{BaseURL: srv.URL, API: client.APIChat, Model: "llama", MaxConns: 8, Timeout: time.Minute})
	if err != nil {
		panic(err)
	}
	defer c.CloseIdleConnections()
	req := &workload.Request{Messages: []workload.Message{{Role: "user", Content: "Hi"}}, MaxTokens: 16}
	resp := c.Do(context.Background(), req, "run1-req1")
	if resp.Err != nil {
		fmt.Println("failed:", resp.Err) // e.g. "http 400: ..."; resp.Err.Kind classifies it
		return
	}
	ttft := resp.FirstToken.Sub(resp.Sent)
	e2e := resp.End.Sub(resp.Sent)
	fmt.Println(resp.Text, resp.OutputTokens, resp.PromptTokens, resp.TokensFrom, resp.FinishReason, len(resp.ChunkTimes))
	fmt.Println(ttft > 0, e2e >= ttft)
	// Output:
	// Hello world 2 9 usage stop 2
	// true true
}
