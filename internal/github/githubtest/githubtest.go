package githubtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is an in-memory fake of the slice of GitHub's REST API that the
// commenter uses, served by an httptest.Server on 127.0.0.1:
//
//	GET   /repos/{owner}/{repo}/issues/{number}/comments  (page, per_page; Link rel="next")
//	POST  /repos/{owner}/{repo}/issues/{number}/comments
//	PATCH /repos/{owner}/{repo}/issues/comments/{id}
//	GET   /repos/{owner}/{repo}/pulls/{number}
//	GET   /user
//
// Every request must carry "Authorization: Bearer <token>"; one without it gets
// 401 Bad credentials, as from GitHub.
//
// The token belongs to no user by default, like the GITHUB_TOKEN of Actions:
// GET /user answers 403 "Resource not accessible by integration" and the
// comments it posts are by "github-actions[bot]". SetUser makes it a user's
// token (a personal access token): GET /user answers that login, and so do
// the comments it posts. Like GitHub for a token that may write to the
// repository, the fake lets the token edit anyone's comment; RefuseEdit
// makes it refuse to edit one.
//
// Seed state with AddComment (another user's comment holding perfgate's
// marker, say) and SetHead, inspect it with Comments and Requests, and inject
// failures with Fail: an error status, a refused edit, or a slow answer
// whose body dribbles in or never ends (Failure.Slow). It is safe for
// concurrent use; the server closes when the test ends, ending any slow
// answer still being sent.
type Server struct {
	t     testing.TB
	token string
	srv   *httptest.Server
	URL   string // the server's base URL, the commenter's apiURL

	mu       sync.Mutex
	nextID   int64
	byPR     map[string][]*Comment // "owner/repo#number" → comments, oldest first
	heads    map[string]string     // "owner/repo#number" → head SHA
	failures []*Failure
	user     string              // the token's login; "" for the Actions token
	issues   map[string][]*Issue // "owner/repo" → issues, oldest first

	// stop is closed when the test ends, so that a slow answer still being
	// sent returns and the server can close.
	stop chan struct{}

	// reqMu guards reqs apart from mu: a handler writes its answer (and
	// so its status) while holding mu.
	reqMu sync.Mutex
	reqs  []Request
}

// Comment is one issue comment held by the fake.
type Comment struct {
	ID   int64
	User string
	Body string
	URL  string // html_url
}

// Request is one request the fake received, failed or not.
type Request struct {
	Method, Path, Query string
	Auth                string // the Authorization header
	Body                string
	Status              int // the status the fake answered
}

// ActionsBot is the login of the comments that the Actions GITHUB_TOKEN
// posts, and of those the fake posts while no SetUser names another.
const ActionsBot = "github-actions[bot]"

// Failure is an answer the fake gives instead of the real one to the next
// Times requests matching Method (any when "") and whose path contains Path.
type Failure struct {
	Method string
	Path   string
	Times  int // how many requests it answers; < 0 for all of them
	Status int
	Header http.Header
	Body   string // the response body, typically {"message": ...}

	// Slow, when not nil, sends the status and headers at once and the body
	// slowly, as it says.
	Slow *Slow
}

// Slow is how a slow answer sends its body once the headers are out.
type Slow struct {
	// Every is the wait before each further byte of the body. Zero sends
	// the first Prefix bytes and then nothing more: the answer never ends,
	// until the client hangs up or the test ends.
	Every time.Duration
	// Prefix is how many bytes of the body go out at once with the headers.
	Prefix int
}

// NewServer starts a fake GitHub expecting token.
func NewServer(t testing.TB, token string) *Server {
	t.Helper()
	f := &Server{
		t:      t,
		token:  token,
		nextID: 1000,
		byPR:   map[string][]*Comment{},
		heads:  map[string]string{},
		stop:   make(chan struct{}),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /repos/{owner}/{repo}/issues/{number}/comments", f.listComments)
	mux.HandleFunc("POST /repos/{owner}/{repo}/issues/{number}/comments", f.createComment)
	mux.HandleFunc("PATCH /repos/{owner}/{repo}/issues/comments/{id}", f.editComment)
	mux.HandleFunc("GET /repos/{owner}/{repo}/pulls/{number}", f.getPull)
	mux.HandleFunc("GET /user", f.getUser)
	f.serveIssues(mux)
	f.srv = httptest.NewServer(f.middleware(mux))
	f.URL = f.srv.URL
	t.Cleanup(func() {
		close(f.stop) // slow answers return first: Close waits for every handler
		f.srv.Close()
	})
	return f
}

// SetUser makes the token a user's (a personal access token's): GET /user
// answers login, and the comments the token posts are by login. With "" the
// token is the Actions GITHUB_TOKEN again, the default.
func (f *Server) SetUser(login string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.user = login
}

// RefuseEdit makes the fake answer status (403 or 404, say) with message to
// the next times requests that edit comment id (times < 0: all of them), as
// GitHub does when the token may not edit that comment or it is gone.
func (f *Server) RefuseEdit(id int64, status, times int, message string) {
	body, _ := json.Marshal(map[string]string{"message": message})
	f.Fail(Failure{
		Method: http.MethodPatch,
		Path:   fmt.Sprintf("/issues/comments/%d", id),
		Times:  times,
		Status: status,
		Body:   string(body),
	})
}

// Client returns an HTTP client for the fake's server.
func (f *Server) Client() *http.Client { return f.srv.Client() }

// AddComment adds a comment by user to owner/repo#number, as if posted
// earlier, and returns it.
func (f *Server) AddComment(owner, repo string, number int, user, body string) Comment {
	f.mu.Lock()
	defer f.mu.Unlock()
	return *f.add(owner, repo, number, user, body)
}

// add appends a comment; f.mu must be held.
func (f *Server) add(owner, repo string, number int, user, body string) *Comment {
	f.nextID++
	c := &Comment{
		ID:   f.nextID,
		User: user,
		Body: body,
		URL:  fmt.Sprintf("https://github.com/%s/%s/pull/%d#issuecomment-%d", owner, repo, number, f.nextID),
	}
	k := prKey(owner, repo, number)
	f.byPR[k] = append(f.byPR[k], c)
	return c
}

// Comments returns a copy of the comments on owner/repo#number, oldest first.
func (f *Server) Comments(owner, repo string, number int) []Comment {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Comment
	for _, c := range f.byPR[prKey(owner, repo, number)] {
		out = append(out, *c)
	}
	return out
}

// SetHead makes owner/repo#number a pull request whose head is sha.
func (f *Server) SetHead(owner, repo string, number int, sha string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.heads[prKey(owner, repo, number)] = sha
}

// Fail queues a failure; failures are matched in the order they were queued.
func (f *Server) Fail(ff Failure) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures = append(f.failures, &ff)
}

// Requests returns the requests received so far with method (all when "").
func (f *Server) Requests(method string) []Request {
	f.reqMu.Lock()
	defer f.reqMu.Unlock()
	var out []Request
	for _, r := range f.reqs {
		if method == "" || r.Method == method {
			out = append(out, r)
		}
	}
	return out
}

func prKey(owner, repo string, number int) string {
	return fmt.Sprintf("%s/%s#%d", owner, repo, number)
}

// statusRecorder notes the status of a recorded request as it is written,
// before any of the response can reach the client.
type statusRecorder struct {
	http.ResponseWriter
	setStatus func(code int)
}

// Unwrap gives http.ResponseController the writer underneath, to flush.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *statusRecorder) WriteHeader(code int) {
	s.setStatus(code)
	s.ResponseWriter.WriteHeader(code)
}

// middleware records each request, checks the token, and serves injected
// failures before next.
func (f *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			f.t.Errorf("fake GitHub: reading the request body: %v", err)
		}
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		// The request is recorded before it is answered: a large response
		// is flushed to the client while the handler still runs, and a
		// test that has its answer must find the request recorded.
		f.reqMu.Lock()
		idx := len(f.reqs)
		f.reqs = append(f.reqs, Request{
			Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
			Auth: r.Header.Get("Authorization"), Body: string(body), Status: http.StatusOK,
		})
		f.reqMu.Unlock()
		rec := &statusRecorder{ResponseWriter: w, setStatus: func(code int) {
			f.reqMu.Lock()
			defer f.reqMu.Unlock()
			f.reqs[idx].Status = code
		}}

		if r.Header.Get("Authorization") != "Bearer "+f.token {
			writeJSON(rec, http.StatusUnauthorized, map[string]string{"message": "Bad credentials"})
			return
		}
		if ff := f.takeFailure(r); ff != nil {
			for k, vs := range ff.Header {
				for _, v := range vs {
					rec.Header().Add(k, v)
				}
			}
			rec.Header().Set("Content-Type", "application/json")
			if ff.Slow != nil {
				f.writeSlowly(rec, r, ff.Status, ff.Body, *ff.Slow)
				return
			}
			rec.WriteHeader(ff.Status)
			_, _ = io.WriteString(rec, ff.Body)
			return
		}
		next.ServeHTTP(rec, r)
	})
}

// writeSlowly sends status and the headers, then body as slow says. It
// returns when the body is all sent, the client has hung up, or the test has
// ended.
func (f *Server) writeSlowly(w http.ResponseWriter, r *http.Request, status int, body string, slow Slow) {
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	flush := func() { _ = http.NewResponseController(w).Flush() }
	sent := min(max(slow.Prefix, 0), len(body))
	_, _ = io.WriteString(w, body[:sent])
	flush()
	var tick <-chan time.Time
	if slow.Every > 0 {
		ticker := time.NewTicker(slow.Every)
		defer ticker.Stop()
		tick = ticker.C
	}
	for sent < len(body) {
		select {
		case <-r.Context().Done():
			return
		case <-f.stop:
			return
		case <-tick:
			if _, err := io.WriteString(w, body[sent:sent+1]); err != nil {
				return
			}
			sent++
			flush()
		}
	}
}

// takeFailure returns the first queued failure matching r, using it up.
func (f *Server) takeFailure(r *http.Request) *Failure {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ff := range f.failures {
		if ff.Times == 0 || (ff.Method != "" && ff.Method != r.Method) || !strings.Contains(r.URL.Path, ff.Path) {
			continue
		}
		if ff.Times > 0 {
			ff.Times--
		}
		return ff
	}
	return nil
}

// commentJSON is a comment as the API returns it.
func commentJSON(c *Comment) map[string]any {
	return map[string]any{
		"id":       c.ID,
		"body":     c.Body,
		"html_url": c.URL,
		"user":     map[string]any{"login": c.User},
	}
}

func (f *Server) listComments(w http.ResponseWriter, r *http.Request) {
	number, ok := pathInt(w, r, "number")
	if !ok {
		return
	}
	page, perPage, ok := pageOf(w, r)
	if !ok {
		return
	}

	f.mu.Lock()
	all := f.byPR[prKey(r.PathValue("owner"), r.PathValue("repo"), number)]
	start, end := min((page-1)*perPage, len(all)), min(page*perPage, len(all))
	out := []map[string]any{}
	for _, c := range all[start:end] {
		out = append(out, commentJSON(c))
	}
	last := max((len(all)+perPage-1)/perPage, 1)
	f.mu.Unlock()

	link := func(p int, rel string) string {
		return fmt.Sprintf(`<%s%s?page=%d&per_page=%d>; rel="%s"`, f.URL, r.URL.Path, p, perPage, rel)
	}
	var links []string
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"), link(page-1, "prev"))
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	writeJSON(w, http.StatusOK, out)
}

// pageOf reads a listing's page and per_page (default 1 and 30),
// answering 422 as GitHub does when they are out of range.
func pageOf(w http.ResponseWriter, r *http.Request) (page, perPage int, ok bool) {
	page, perPage = 1, 30
	if v := r.URL.Query().Get("page"); v != "" {
		page, _ = strconv.Atoi(v)
	}
	if v := r.URL.Query().Get("per_page"); v != "" {
		perPage, _ = strconv.Atoi(v)
	}
	if page < 1 || perPage < 1 || perPage > 100 {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "bad page or per_page"})
		return 0, 0, false
	}
	return page, perPage, true
}

// commentBody reads a request's {"body": ...}, answering 422 as GitHub
// does when it is missing.
func commentBody(w http.ResponseWriter, r *http.Request) (string, bool) {
	var in struct {
		Body *string `json:"body"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Body == nil {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "body is missing"})
		return "", false
	}
	return *in.Body, true
}

func (f *Server) createComment(w http.ResponseWriter, r *http.Request) {
	number, ok := pathInt(w, r, "number")
	if !ok {
		return
	}
	body, ok := commentBody(w, r)
	if !ok {
		return
	}
	f.mu.Lock()
	c := f.add(r.PathValue("owner"), r.PathValue("repo"), number, f.login(), body)
	out := commentJSON(c)
	f.mu.Unlock()
	writeJSON(w, http.StatusCreated, out)
}

func (f *Server) editComment(w http.ResponseWriter, r *http.Request) {
	id, ok := pathInt(w, r, "id")
	if !ok {
		return
	}
	body, ok := commentBody(w, r)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	prefix := r.PathValue("owner") + "/" + r.PathValue("repo") + "#"
	for k, cs := range f.byPR {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		for _, c := range cs {
			if c.ID == int64(id) {
				c.Body = body
				writeJSON(w, http.StatusOK, commentJSON(c))
				return
			}
		}
	}
	writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
}

func (f *Server) getPull(w http.ResponseWriter, r *http.Request) {
	number, ok := pathInt(w, r, "number")
	if !ok {
		return
	}
	f.mu.Lock()
	sha, found := f.heads[prKey(r.PathValue("owner"), r.PathValue("repo"), number)]
	f.mu.Unlock()
	if !found {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"number": number, "head": map[string]any{"sha": sha}})
}

// login is the login of the token's comments; f.mu must be held.
func (f *Server) login() string {
	if f.user == "" {
		return ActionsBot
	}
	return f.user
}

// getUser answers GET /user: the user's login, or for the Actions token the
// 403 GitHub gives an installation token.
func (f *Server) getUser(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	user := f.user
	f.mu.Unlock()
	if user == "" {
		writeJSON(w, http.StatusForbidden, map[string]string{
			"message":           "Resource not accessible by integration",
			"documentation_url": "https://docs.github.com/rest/users/users#get-the-authenticated-user",
		})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"login": user, "id": 1, "type": "User"})
}

// pathInt reads the path value name as an integer, answering 404 when it is not.
func pathInt(w http.ResponseWriter, r *http.Request, name string) (int, bool) {
	n, err := strconv.Atoi(r.PathValue(name))
	if err != nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return 0, false
	}
	return n, true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
