package layers

import (
	"context"
	"errors"
	"testing"
	"time"

	"strata.dev/strata/config"
)

// A layer's plan keeps its JSON only when a set will read it.
func TestPolicyLookupKeepsTheJSONOnlyForASet(t *testing.T) {
	guard := policySource{PolicySet: config.PolicySet{Name: "guard", Path: "policy/guard", Enforcement: config.Block}}
	tests := []struct {
		name string
		lp   *layerPolicy
		err  error
		want int64
	}{
		{"no set judges the layer", &layerPolicy{SHA: "b1"}, nil, 0},
		{"the layer names a set nobody defines", &layerPolicy{SHA: "b1", Unknown: []string{"the layer names set gaurd, which neither the server config nor .strata.yaml defines"}}, nil, 0},
		{"a set judges the layer", &layerPolicy{SHA: "b1", Sets: []policySource{guard}}, nil, 32 << 20},
		{"a server set judges the layer", &layerPolicy{SHA: "b1", Sets: []policySource{{PolicySet: guard.PolicySet, Server: true}}}, nil, 32 << 20},
		{"the lookup failed: judgePlan says so, nothing reads the JSON", nil, errors.New("GitHub: 502"), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := startLookup(context.Background(), func(context.Context) (*layerPolicy, error) { return tt.lp, tt.err })
			if got := l.keepJSON(); got != tt.want {
				t.Errorf("keepJSON() = %d, want %d", got, tt.want)
			}
			lp, err := l.wait(context.Background())
			if lp != tt.lp || err != tt.err {
				t.Errorf("wait() = %v, %v, want what the lookup found", lp, err)
			}
		})
	}
}

// A run that ends before its plan is made ends its lookup: nothing waits
// on GitHub after it.
func TestPolicyLookupEndsWithTheRun(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ended := make(chan struct{})
	l := startLookup(ctx, func(ctx context.Context) (*layerPolicy, error) {
		defer close(ended)
		<-ctx.Done()
		return nil, context.Cause(ctx)
	})
	waitCtx, stop := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer stop()
	if _, err := l.wait(waitCtx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait() before the lookup ended = %v, want the waiter's deadline", err)
	}
	stopped := errors.New("the pull request has a newer head commit")
	cancel(stopped)
	<-ended
	if got := l.keepJSON(); got != 0 {
		t.Errorf("keepJSON() of a lookup the run ended = %d, want 0", got)
	}
	if _, err := l.wait(context.Background()); err != stopped {
		t.Errorf("wait() = %v, want the run's cause", err)
	}
}
