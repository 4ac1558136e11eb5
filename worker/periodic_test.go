package worker

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"strata.dev/strata/jobs"
)

// A scan goes over every item even when some fail, and stops at the first
// item it reaches once its context is done. The context ends inside the
// callback (the barrier), so no timing decides the outcome.
func TestEachGoesOverEveryItemUntilTheContextEnds(t *testing.T) {
	for name, tc := range map[string]struct {
		items    []string
		fail     []string
		cancelAt string // the item whose call ends the context
		want     []string
		wantErr  string
	}{
		"all":                {items: []string{"a", "b", "c"}, want: []string{"a", "b", "c"}},
		"none":               {},
		"one fails":          {items: []string{"a", "b", "c"}, fail: []string{"b"}, want: []string{"a", "b", "c"}, wantErr: "b failed"},
		"two fail":           {items: []string{"a", "b", "c"}, fail: []string{"a", "c"}, want: []string{"a", "b", "c"}, wantErr: "a failed\nc failed"},
		"cancelled midway":   {items: []string{"a", "b", "c", "d"}, cancelAt: "b", want: []string{"a", "b"}, wantErr: "2 of 4 left: context canceled"},
		"cancelled at last":  {items: []string{"a", "b"}, cancelAt: "b", want: []string{"a", "b"}},
		"failed, then ended": {items: []string{"a", "b", "c"}, fail: []string{"a"}, cancelAt: "a", want: []string{"a"}, wantErr: "a failed\n2 of 3 left: context canceled"},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var got []string
			err := Each(ctx, tc.items, func(ctx context.Context, it string) error {
				got = append(got, it)
				if it == tc.cancelAt {
					cancel()
				}
				if slices.Contains(tc.fail, it) {
					return errors.New(it + " failed")
				}
				return nil
			})
			if !slices.Equal(got, tc.want) {
				t.Errorf("called %v, want %v", got, tc.want)
			}
			if msg := errString(err); msg != tc.wantErr {
				t.Errorf("error %q, want %q", msg, tc.wantErr)
			}
			if strings.Contains(tc.wantErr, "context canceled") && !errors.Is(err, context.Canceled) {
				t.Errorf("error %v is not context.Canceled", err)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Two features scheduling one ID would share one River schedule (River
// keeps one per ID): a wiring error, refused when the runtime is built.
func TestRuntimeRefusesAPeriodicIDClaimedTwice(t *testing.T) {
	a := Feature{Name: "a", Periodic: []Periodic{{ID: "scan", Every: 1, Args: jobs.DriftScan{}}}}
	b := Feature{Name: "b", Periodic: []Periodic{{ID: "scan", Every: 2, Args: jobs.SyncRepin{}}}}
	_, err := New(&Deps{}, a, b)
	if err == nil || err.Error() != "periodic job scan is claimed twice (by a and b)" {
		t.Errorf("error %v", err)
	}
	if _, err := New(&Deps{}, a, Feature{Name: "c"}); err != nil {
		t.Errorf("one feature's scan refused: %v", err)
	}
}
