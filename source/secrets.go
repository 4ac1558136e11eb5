package source

import (
	"errors"
	"net/url"
	"strings"
)

// withoutSecrets takes the query and user info out of the URL that an error
// of net/http or net/url carries. The tarball link GitHub redirects to
// (codeload) holds a token in its query, and these errors end up on checks,
// in comments and in logs.
func withoutSecrets(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	clean := &url.Error{Op: ue.Op, URL: bareURL(ue.URL), Err: ue.Err}
	if ue == err {
		return clean
	}
	// Wrapped: keep the wrapping's words, with the URL bared.
	return &scrubbed{msg: strings.ReplaceAll(err.Error(), ue.Error(), clean.Error()), err: clean}
}

// bareURL is raw without query, fragment and user info; what does not parse
// is left out whole, since it may be anything.
func bareURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}

type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }
