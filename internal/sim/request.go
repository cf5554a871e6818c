package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// apiKind is which completion endpoint a request came to.
type apiKind int

const (
	apiChat apiKind = iota
	apiCompletions
)

// defaultMaxTokens applies when a request sets no max_tokens: OpenAI's
// completions default. (vLLM fills the context instead; the sim needs a
// finite, predictable length.)
const defaultMaxTokens = 16

// maxBody bounds a request body.
const maxBody = 64 << 20

// wireRequest is the part of an OpenAI request the sim reads; unknown fields
// are ignored, as vLLM does.
type wireRequest struct {
	Model               string          `json:"model"`
	Messages            []wireMessage   `json:"messages"`
	Prompt              json.RawMessage `json:"prompt"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	N         *int `json:"n"`
	IgnoreEOS bool `json:"ignore_eos"` // accepted: output is max_tokens long anyway
	MinTokens int  `json:"min_tokens"` // accepted: output is max_tokens long anyway
	// Tools and ToolChoice (chat): a request with tools is answered with a
	// call (see chooseTool).
	Tools          []wireTool      `json:"tools"`
	ToolChoice     json.RawMessage `json:"tool_choice"`
	ResponseFormat json.RawMessage `json:"response_format"`
}

type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// constrained says the request is decoded under a grammar: JSON, or a tool
// call.
func (r *request) constrained() bool { return r.tool != nil || r.isJSON }

// request is a validated request as the sim sees it.
type request struct {
	// model is the model the request named ("" for none).
	model        string
	promptText   string
	promptTokens int
	blocks       []uint64
	maxTokens    int
	stream       bool
	includeUsage bool
	// tool is the call a chat request with tools is answered with; nil
	// for text.
	tool *toolCall
	// json is the JSON text a request with a response_format of JSON is
	// answered with (when tool is nil); isJSON says there is one.
	json   string
	isJSON bool
}

func parseRequest(r *http.Request, api apiKind) (*request, error) {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("reading request body: %w", err)
	}
	return decodeRequest(body, api)
}

func decodeRequest(body []byte, api apiKind) (*request, error) {
	var wr wireRequest
	if err := json.Unmarshal(body, &wr); err != nil {
		return nil, fmt.Errorf("invalid JSON body: %w", err)
	}
	var words []string
	var text string
	switch api {
	case apiChat:
		if len(wr.Messages) == 0 {
			return nil, errors.New("messages: required, must be a non-empty array")
		}
		parts := make([]string, 0, len(wr.Messages))
		for i, m := range wr.Messages {
			c, err := messageText(m.Content)
			if err != nil {
				return nil, fmt.Errorf("messages[%d].content: %w", i, err)
			}
			parts = append(parts, c)
		}
		text = strings.Join(parts, "\n")
		words = strings.Fields(text)
	case apiCompletions:
		var err error
		text, words, err = promptWords(wr.Prompt)
		if err != nil {
			return nil, fmt.Errorf("prompt: %w", err)
		}
	}
	maxTokens := defaultMaxTokens
	switch {
	case wr.MaxTokens != nil:
		maxTokens = *wr.MaxTokens
		if maxTokens <= 0 {
			return nil, fmt.Errorf("max_tokens: must be at least 1, got %d", maxTokens)
		}
	case wr.MaxCompletionTokens != nil:
		maxTokens = *wr.MaxCompletionTokens
		if maxTokens <= 0 {
			return nil, fmt.Errorf("max_completion_tokens: must be at least 1, got %d", maxTokens)
		}
	}
	if wr.N != nil && *wr.N != 1 {
		return nil, fmt.Errorf("n: perfgate sim supports only n=1, got %d", *wr.N)
	}
	if wr.MinTokens < 0 || wr.MinTokens > maxTokens {
		return nil, fmt.Errorf("min_tokens: must be in [0, max_tokens=%d], got %d", maxTokens, wr.MinTokens)
	}
	var tool *toolCall
	if api == apiChat {
		var err error
		if tool, err = chooseTool(wr.Tools, wr.ToolChoice); err != nil {
			return nil, err
		}
	}
	jsonText, isJSON, err := jsonFormat(wr.ResponseFormat)
	if err != nil {
		return nil, err
	}
	return &request{
		model:        wr.Model,
		tool:         tool,
		json:         jsonText,
		isJSON:       isJSON,
		promptText:   text,
		promptTokens: max(len(words), 1),
		blocks:       blockHashes(words),
		maxTokens:    maxTokens,
		stream:       wr.Stream,
		includeUsage: wr.Stream && wr.StreamOptions != nil && wr.StreamOptions.IncludeUsage,
	}, nil
}

// messageText is a chat message's text: a string, null, or an array of
// content parts whose "text" fields are joined.
func messageText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", err
		}
		texts := make([]string, 0, len(parts))
		for _, p := range parts {
			texts = append(texts, p.Text)
		}
		return strings.Join(texts, " "), nil
	}
	return "", errors.New("must be a string or an array of content parts")
}

// promptWords reads a completions prompt: a string, an array of one string,
// or an array of token ids (each id one token).
func promptWords(raw json.RawMessage) (string, []string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil, errors.New("required")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, strings.Fields(s), nil
	}
	var ss []string
	if json.Unmarshal(raw, &ss) == nil {
		if len(ss) != 1 {
			return "", nil, fmt.Errorf("perfgate sim supports exactly one prompt, got %d", len(ss))
		}
		return ss[0], strings.Fields(ss[0]), nil
	}
	var ids []int64
	if json.Unmarshal(raw, &ids) == nil {
		if len(ids) == 0 {
			return "", nil, errors.New("must not be empty")
		}
		words := make([]string, len(ids))
		for i, id := range ids {
			words[i] = strconv.FormatInt(id, 10)
		}
		return strings.Join(words, " "), words, nil
	}
	return "", nil, errors.New("must be a string, an array of one string, or an array of token ids")
}
