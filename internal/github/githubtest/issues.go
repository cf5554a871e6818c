package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
)

// Issue is one issue held by the fake: created by the token (POST
// /repos/{owner}/{repo}/issues) or seeded with AddIssue. Its comments are
// the comments of its number (Comments).
type Issue struct {
	Number int
	User   string
	Title  string
	Body   string
	State  string // open or closed
	URL    string // html_url
}

// The issue endpoints, served beside the comments':
//
//	GET   /repos/{owner}/{repo}/issues           (state open|closed|all; page, per_page)
//	POST  /repos/{owner}/{repo}/issues
//	PATCH /repos/{owner}/{repo}/issues/{number}  (title, body, state)
func (f *Server) serveIssues(mux *http.ServeMux) {
	mux.HandleFunc("GET /repos/{owner}/{repo}/issues", f.listIssues)
	mux.HandleFunc("POST /repos/{owner}/{repo}/issues", f.createIssue)
	mux.HandleFunc("PATCH /repos/{owner}/{repo}/issues/{number}", f.editIssue)
}

// AddIssue adds an open issue by user to owner/repo, as if opened
// earlier, and returns it.
func (f *Server) AddIssue(owner, repo, user, title, body string) Issue {
	f.mu.Lock()
	defer f.mu.Unlock()
	return *f.addIssue(owner, repo, user, title, body)
}

// addIssue opens an issue; f.mu must be held. Issues and pull requests
// share their numbers with comments' ids in the fake: one counter.
func (f *Server) addIssue(owner, repo, user, title, body string) *Issue {
	f.nextID++
	n := int(f.nextID)
	is := &Issue{Number: n, User: user, Title: title, Body: body, State: "open",
		URL: fmt.Sprintf("https://github.com/%s/%s/issues/%d", owner, repo, n)}
	if f.issues == nil {
		f.issues = map[string][]*Issue{}
	}
	k := owner + "/" + repo
	f.issues[k] = append(f.issues[k], is)
	return is
}

// Issues returns a copy of owner/repo's issues, oldest first.
func (f *Server) Issues(owner, repo string) []Issue {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Issue
	for _, is := range f.issues[owner+"/"+repo] {
		out = append(out, *is)
	}
	return out
}

func issueJSON(is *Issue) map[string]any {
	return map[string]any{"number": is.Number, "title": is.Title, "body": is.Body, "state": is.State,
		"html_url": is.URL, "user": map[string]any{"login": is.User}}
}

func (f *Server) listIssues(w http.ResponseWriter, r *http.Request) {
	state := r.URL.Query().Get("state")
	if state == "" {
		state = "open"
	}
	page, perPage, ok := pageOf(w, r)
	if !ok {
		return
	}
	f.mu.Lock()
	var all []*Issue
	for _, is := range slices.Backward(f.issues[r.PathValue("owner")+"/"+r.PathValue("repo")]) { // newest first, as GitHub lists
		if state == "all" || is.State == state {
			all = append(all, is)
		}
	}
	start, end := min((page-1)*perPage, len(all)), min(page*perPage, len(all))
	out := []map[string]any{}
	for _, is := range all[start:end] {
		out = append(out, issueJSON(is))
	}
	more := end < len(all)
	f.mu.Unlock()
	if more {
		w.Header().Set("Link", fmt.Sprintf(`<%s%s?state=%s&page=%d&per_page=%d>; rel="next"`, f.URL, r.URL.Path, state, page+1, perPage))
	}
	writeJSON(w, http.StatusOK, out)
}

// issueEdit is a request's issue fields; nil where it left one out.
type issueEdit struct {
	Title *string `json:"title"`
	Body  *string `json:"body"`
	State *string `json:"state"`
}

func (f *Server) createIssue(w http.ResponseWriter, r *http.Request) {
	var in issueEdit
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Title == nil || *in.Title == "" {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Invalid request: title is missing"})
		return
	}
	body := ""
	if in.Body != nil {
		body = *in.Body
	}
	f.mu.Lock()
	is := f.addIssue(r.PathValue("owner"), r.PathValue("repo"), f.login(), *in.Title, body)
	out := issueJSON(is)
	f.mu.Unlock()
	writeJSON(w, http.StatusCreated, out)
}

func (f *Server) editIssue(w http.ResponseWriter, r *http.Request) {
	number, ok := pathInt(w, r, "number")
	if !ok {
		return
	}
	var in issueEdit
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Problems parsing JSON"})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, is := range f.issues[r.PathValue("owner")+"/"+r.PathValue("repo")] {
		if is.Number != number {
			continue
		}
		if in.Title != nil {
			is.Title = *in.Title
		}
		if in.Body != nil {
			is.Body = *in.Body
		}
		if in.State != nil {
			if *in.State != "open" && *in.State != "closed" {
				writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "state must be open or closed"})
				return
			}
			is.State = *in.State
		}
		writeJSON(w, http.StatusOK, issueJSON(is))
		return
	}
	writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
}
