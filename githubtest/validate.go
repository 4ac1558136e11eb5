package githubtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// apiDir is where GitHub's API descriptions live: $STRATA_GITHUB_API_DIR, or
// shared/github-api next to the repository.
func apiDir() string {
	if d := os.Getenv("STRATA_GITHUB_API_DIR"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "shared", "github-api")
}

// restSpec is GitHub's REST description, loaded once per test binary because
// parsing its 13 MB takes seconds.
type restSpec struct {
	doc       *openapi3.T
	templates []routeTemplate
}

// routeTemplate is one path of the description split into segments. A
// parameter such as {ref} or {path} spans several segments, as on GitHub.
type routeTemplate struct {
	path     string
	item     *openapi3.PathItem
	segments []string
	literals int
	multi    map[string]bool // parameters that may contain "/"
}

var (
	specOnce sync.Once
	specVal  *restSpec
	specErr  error
)

func loadRESTSpec() (*restSpec, error) {
	specOnce.Do(func() {
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromFile(filepath.Join(apiDir(), "api.github.com.json"))
		if err != nil {
			specErr = fmt.Errorf("load GitHub REST description: %w", err)
			return
		}
		s := &restSpec{doc: doc}
		for path, item := range doc.Paths.Map() {
			rt := routeTemplate{path: path, item: item, segments: strings.Split(strings.Trim(path, "/"), "/")}
			rt.multi = map[string]bool{}
			for _, seg := range rt.segments {
				if !isParam(seg) {
					rt.literals++
				} else if name := seg[1 : len(seg)-1]; multiSegment(item, name) {
					rt.multi[name] = true
				}
			}
			s.templates = append(s.templates, rt)
		}
		// Prefer the most specific template: /commits/{ref}/status over /commits/{ref}.
		sort.Slice(s.templates, func(i, j int) bool {
			if s.templates[i].literals != s.templates[j].literals {
				return s.templates[i].literals > s.templates[j].literals
			}
			return s.templates[i].path < s.templates[j].path
		})
		specVal = s
	})
	return specVal, specErr
}

func isParam(seg string) bool { return strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") }

// multiSegment reports whether a path parameter may contain slashes.
func multiSegment(item *openapi3.PathItem, name string) bool {
	for _, op := range item.Operations() {
		for _, p := range op.Parameters {
			if p.Value != nil && p.Value.Name == name && p.Value.In == "path" {
				if v, ok := p.Value.Extensions["x-multi-segment"].(bool); ok && v {
					return true
				}
			}
		}
	}
	return name == "ref" || name == "path" || name == "basehead"
}

// match finds the template for path segments, with its parameters.
func (rt routeTemplate) match(segs []string) (map[string]string, bool) {
	params := map[string]string{}
	var walk func(ti, si int) bool
	walk = func(ti, si int) bool {
		if ti == len(rt.segments) {
			return si == len(segs)
		}
		if si >= len(segs) {
			return false
		}
		t := rt.segments[ti]
		if !isParam(t) {
			return t == segs[si] && walk(ti+1, si+1)
		}
		name := t[1 : len(t)-1]
		if !rt.multi[name] {
			if segs[si] == "" {
				return false
			}
			params[name] = segs[si]
			return walk(ti+1, si+1)
		}
		// A multi-segment parameter leaves as few segments as the rest needs.
		rest := len(rt.segments) - ti - 1
		for end := len(segs) - rest; end > si; end-- {
			params[name] = strings.Join(segs[si:end], "/")
			if walk(ti+1, end) {
				return true
			}
		}
		return false
	}
	if !walk(0, 0) {
		return nil, false
	}
	return params, true
}

// errNoRoute and errNoMethod tell an unknown route from a wrong method.
var (
	errNoRoute  = errors.New("no such route in GitHub's REST API")
	errNoMethod = errors.New("method not allowed on this route")
)

// route finds the operation for a method and a path relative to the REST base.
func (s *restSpec) route(method, path string) (*routers.Route, map[string]string, error) {
	var segs []string
	for _, seg := range strings.Split(strings.Trim(path, "/"), "/") {
		u, err := url.PathUnescape(seg)
		if err != nil {
			return nil, nil, errNoRoute
		}
		segs = append(segs, u)
	}
	found := false
	for _, rt := range s.templates {
		params, ok := rt.match(segs)
		if !ok {
			continue
		}
		found = true
		if op := rt.item.GetOperation(method); op != nil {
			return &routers.Route{Spec: s.doc, Path: rt.path, PathItem: rt.item, Method: method, Operation: op}, params, nil
		}
	}
	if found {
		return nil, nil, errNoMethod
	}
	return nil, nil, errNoRoute
}

// validate checks a request against the description. body is the request
// body, already read.
func (s *restSpec) validate(r *http.Request, route *routers.Route, params map[string]string, body []byte) error {
	req := r.Clone(context.Background())
	req.Body = io.NopCloser(bytes.NewReader(body))
	if len(body) > 0 && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	in := &openapi3filter.RequestValidationInput{
		Request:    req,
		PathParams: params,
		Route:      route,
		Options: &openapi3filter.Options{
			AuthenticationFunc:  openapi3filter.NoopAuthenticationFunc,
			SkipSettingDefaults: true,
		},
	}
	return openapi3filter.ValidateRequest(context.Background(), in)
}

// fieldError is one entry of GitHub's 422 "Validation Failed" errors array.
type fieldError struct {
	Resource string `json:"resource"`
	Field    string `json:"field"`
	Code     string `json:"code"`
	Message  string `json:"message,omitempty"`
}

// Limits GitHub enforces that its description does not state.
const (
	maxCommentChars  = 65536
	maxCheckRunBytes = 65535
)

// checkLimits applies GitHub's undocumented limits to a decoded JSON body.
func checkLimits(route string, body map[string]any) []fieldError {
	var errs []fieldError
	switch route {
	case "/repos/{owner}/{repo}/issues/{issue_number}/comments", "/repos/{owner}/{repo}/issues/comments/{comment_id}":
		if b, ok := body["body"].(string); ok && utf8.RuneCountInString(b) > maxCommentChars {
			errs = append(errs, fieldError{Resource: "IssueComment", Field: "body", Code: "custom",
				Message: fmt.Sprintf("body is too long (maximum is %d characters)", maxCommentChars)})
		}
	case "/repos/{owner}/{repo}/check-runs", "/repos/{owner}/{repo}/check-runs/{check_run_id}":
		out, _ := body["output"].(map[string]any)
		for _, f := range []string{"summary", "text"} {
			if v, ok := out[f].(string); ok && len(v) > maxCheckRunBytes {
				errs = append(errs, fieldError{Resource: "CheckRun", Field: "output." + f, Code: "custom",
					Message: fmt.Sprintf("Only %d bytes are allowed.", maxCheckRunBytes)})
			}
		}
		actions, _ := body["actions"].([]any)
		if len(actions) > 3 {
			errs = append(errs, fieldError{Resource: "CheckRun", Field: "actions", Code: "custom",
				Message: "Only 3 actions are allowed."})
		}
		for _, a := range actions {
			m, _ := a.(map[string]any)
			for f, max := range map[string]int{"label": 20, "identifier": 20, "description": 40} {
				if v, ok := m[f].(string); ok && utf8.RuneCountInString(v) > max {
					errs = append(errs, fieldError{Resource: "CheckRun", Field: "actions." + f, Code: "custom",
						Message: fmt.Sprintf("%s is too long (maximum is %d characters)", f, max)})
				}
			}
		}
	}
	return errs
}
