package ghretry

import (
	"errors"
	"time"

	"github.com/google/go-github/v60/github"
)

// RetryAt says when a request that failed for a rate limit may be sent
// again, whichever layer refused it: this middleware, when the limit
// outlasts what the request may wait (*LimitError), or go-github, which
// remembers an exhausted limit and refuses requests itself until its reset
// without sending them (*github.RateLimitError), or a secondary limit it
// was told of (*github.AbuseRateLimitError; a minute when GitHub did not
// say how long). ok is false for any other error.
func RetryAt(err error, now time.Time) (at time.Time, ok bool) {
	var limit *LimitError
	var primary *github.RateLimitError
	var secondary *github.AbuseRateLimitError
	switch {
	case err == nil:
		return time.Time{}, false
	case errors.As(err, &limit):
		return limit.Until, true
	case errors.As(err, &primary):
		return primary.Rate.Reset.Time, true
	case errors.As(err, &secondary):
		if secondary.RetryAfter != nil {
			return now.Add(*secondary.RetryAfter), true
		}
		return now.Add(untoldLimitWait), true
	}
	return time.Time{}, false
}

// Limited reports whether err is a refusal for a rate limit (RetryAt knows
// when it ends).
func Limited(err error) bool {
	_, ok := RetryAt(err, time.Time{})
	return ok
}
