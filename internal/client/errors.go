package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
)

// maxMessage bounds a server message taken verbatim from a body that is not
// one of the known JSON error shapes.
const maxMessage = 512

// Error reads "<kind>: <the server's message or the cause>", with the status
// after an http kind: "http 400: <the server's message>", "stream: <message
// or cause>", "no_output: <what the stream carried>", "local: <the resource
// perfgate's machine ran out of>", "connect: <cause>", "timeout: <cause>" or
// "canceled: <cause>".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(string(e.Kind))
	if e.Kind == ErrHTTP && e.Status != 0 {
		b.WriteByte(' ')
		b.WriteString(strconv.Itoa(e.Status))
	}
	switch {
	case e.Message != "":
		b.WriteString(": ")
		b.WriteString(e.Message)
	case e.Err != nil:
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	case e.Kind == ErrHTTP && http.StatusText(e.Status) != "":
		b.WriteString(": ")
		b.WriteString(http.StatusText(e.Status))
	}
	return b.String()
}

// Unwrap returns the underlying error, if any.
func (e *Error) Unwrap() error { return e.Err }

// serverMessage extracts the human message from an error body. It knows the
// shapes OpenAI-compatible servers use: {"error":{"message":...}} (OpenAI,
// llama.cpp, vLLM), {"error":"..."} (TGI and others), {"message":...} (vLLM's
// older {"object":"error",...}) and {"detail":...} (FastAPI). Anything else
// gives the first 512 bytes of the body, as valid UTF-8.
func serverMessage(body []byte) string {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return ""
	}
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if body[0] == '{' && json.Unmarshal(body, &v) == nil {
		if m := errorFieldMessage(v.Error); m != "" {
			return m
		}
		if m := jsonString(v.Message); m != "" {
			return m
		}
		if m := jsonString(v.Detail); m != "" {
			return m
		}
		if len(v.Detail) > 0 && string(v.Detail) != "null" {
			// FastAPI validation errors: a list of objects. Show it compactly.
			var c bytes.Buffer
			if json.Compact(&c, v.Detail) == nil {
				return truncate(c.Bytes())
			}
		}
	}
	return truncate(body)
}

// errorFieldMessage reads an "error" member that is a string or an object
// with a "message".
func errorFieldMessage(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	if s := jsonString(raw); s != "" {
		return s
	}
	var o struct {
		Message json.RawMessage `json:"message"`
	}
	if raw[0] == '{' && json.Unmarshal(raw, &o) == nil {
		if s := jsonString(o.Message); s != "" {
			return s
		}
		return truncate(raw)
	}
	return ""
}

// jsonString decodes raw as a JSON string; "" if it is not one.
func jsonString(raw json.RawMessage) string {
	if len(raw) == 0 || raw[0] != '"' {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return strings.TrimSpace(s)
}

// truncate returns at most maxMessage bytes of b, cut on a rune boundary, with
// invalid UTF-8 replaced.
func truncate(b []byte) string {
	return strings.ToValidUTF8(string(cutUTF8(b, maxMessage)), "\uFFFD")
}

// localErrnos are the errors of perfgate's own machine running out of a
// resource, with what to say about each.
var localErrnos = []struct {
	errno syscall.Errno
	what  string // what ran out
	fix   string // what the user can do
}{
	{syscall.EMFILE, "perfgate ran out of open files", "raise `ulimit -n` or lower the concurrency"},
	{syscall.ENFILE, "perfgate's machine ran out of open files system-wide", "raise fs.file-max or lower the concurrency"},
	{syscall.ENOBUFS, "perfgate's machine ran out of socket buffers", "lower the concurrency or free memory"},
	{syscall.ENOMEM, "perfgate's machine ran out of memory", "lower the concurrency or free memory"},
	// EADDRNOTAVAIL also comes from a target of an address family the
	// machine has no address of (IPv6 on an IPv4-only host): still this
	// machine's, and said so.
	{syscall.EADDRNOTAVAIL, "perfgate's machine could not give a new connection a local address, most often because it ran out of local ports", "lower the concurrency or widen net.ipv4.ip_local_port_range (for an IPv6 target, check that this machine has an IPv6 address)"},
}

// localError returns an ErrLocal Error when err is one of localErrnos
// (found through *net.OpError, *os.SyscallError and *url.Error), else nil.
// A failed name lookup keeps only its cause's text (a *net.DNSError wraps no
// errno): a target named by host name looks itself up for every new
// connection, so out of files that is where it fails first.
func localError(err error) *Error {
	var dns *net.DNSError
	isDNS := errors.As(err, &dns)
	for _, l := range localErrnos {
		if errors.Is(err, l.errno) || isDNS && dns.Err == l.errno.Error() {
			return &Error{Kind: ErrLocal, Err: fmt.Errorf("%s (%w); %s. This is perfgate's own limit, not the server's", l.what, err, l.fix)}
		}
	}
	return nil
}
