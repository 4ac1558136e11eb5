package layers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/ghretry"
	"strata.dev/strata/pull"
	"strata.dev/strata/pull/pulltest"
	"strata.dev/strata/sandbox"
	"strata.dev/strata/store"
)

const head, oldHead = "1111111111111111111111111111111111111111", "0000000000000000000000000000000000000000"

var (
	network = config.Layer{Name: "network", Dir: "infra/network", Autoplan: config.Autoplan{Enabled: true, WhenModified: config.DefaultWhenModified}}
	dns     = config.Layer{Name: "dns", Dir: "infra/dns", Autoplan: config.Autoplan{Enabled: false, WhenModified: config.DefaultWhenModified}}
	app     = config.Layer{Name: "app", Dir: "infra/app", DependsOn: []string{"network"}, Autoplan: config.Autoplan{Enabled: true, WhenModified: config.DefaultWhenModified}}
	all     = []config.Layer{network, dns, app}
)

func names(ls []config.Layer) []string { return layerNames(ls) }

// /plan: the layers named (by name or dir), else those the files touch.
func TestPlanTargets(t *testing.T) {
	for _, tc := range []struct {
		name      string
		named     []string
		changed   []string
		want      []string
		refusedBy string
	}{
		{name: "named by name", named: []string{"dns"}, want: []string{"dns"}},
		{name: "named by dir, twice", named: []string{"infra/app", "app"}, want: []string{"app"}},
		{name: "unknown name", named: []string{"nope", "dns"}, refusedBy: "no layer `nope`"},
		{name: "touched files", changed: []string{"infra/network/main.tf", "README.md"}, want: []string{"network"}},
		{name: "autoplan off still planned by /plan", changed: []string{"infra/dns/x.tf"}, want: []string{"dns"}},
		{name: "touches none", changed: []string{"docs/a.md"}, refusedBy: "touches no layer"},
		{name: "no files", refusedBy: "touches no layer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := planTargets(all, tc.named, tc.changed, nil)
			if tc.refusedBy != "" {
				if !strings.Contains(why, tc.refusedBy) || got != nil {
					t.Fatalf("got %v, %q; want a refusal with %q", names(got), why, tc.refusedBy)
				}
				return
			}
			if why != "" || !slices.Equal(names(got), tc.want) {
				t.Fatalf("got %v, %q; want %v", names(got), why, tc.want)
			}
		})
	}
}

// Autoplan keeps the touched layers with autoplan on.
func TestTouchedLayersAutoplan(t *testing.T) {
	got := touchedLayers(all, []string{"infra/dns/main.tf", "infra/app/vars.tfvars"}, nil, true)
	if !slices.Equal(names(got), []string{"app"}) {
		t.Errorf("autoplan = %v, want [app]", names(got))
	}
}

func plan(layer, sha string, changes bool, applied bool) *store.Plan {
	p := &store.Plan{Layer: layer, HeadSHA: sha, HasChanges: changes}
	if applied {
		p.AppliedAt = time.Unix(1, 0)
	}
	return p
}

// /apply with each fact that refuses it, and the ones that let it run.
func TestDecideApply(t *testing.T) {
	strict := func(l config.Layer, reqs ...config.ApplyRequirement) config.Layer {
		l.ApplyRequirements = reqs
		return l
	}
	locked := map[string]int{"network": 7, "dns": 7, "app": 7}
	writers := map[string]pull.Permission{"alice": pull.Write, "bob": pull.Write, "rita": pull.Read}
	for _, tc := range []struct {
		name   string
		layers []config.Layer
		plans  []*store.Plan
		locks  map[string]int
		pr     pulltest.Context
		// want: the layers run in order, or the refused layers and a part
		// of the reason, or a part of the reply.
		run     []string
		refused []string
		reason  string
		reply   string
	}{
		{name: "planned at the head, locked: runs", layers: []config.Layer{network},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: locked, run: []string{"network"}},
		{name: "no plan: stale", layers: []config.Layer{network}, locks: locked,
			refused: []string{"network"}, reason: staleMessage},
		{name: "plan of an older head: stale", layers: []config.Layer{network},
			plans: []*store.Plan{plan("network", oldHead, true, false)}, locks: locked, refused: []string{"network"}, reason: staleMessage},
		{name: "already applied", layers: []config.Layer{network},
			plans: []*store.Plan{plan("network", head, true, true)}, locks: locked, reply: "already applied"},
		{name: "lock held by another PR", layers: []config.Layer{network},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: map[string]int{"network": 8},
			refused: []string{"network"}, reason: "does not hold the layer's lock"},
		{name: "lock gone", layers: []config.Layer{network},
			plans: []*store.Plan{plan("network", head, true, false)}, refused: []string{"network"}, reason: "does not hold the layer's lock"},
		{name: "approval required, none", layers: []config.Layer{strict(network, config.Approved)},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: locked,
			pr: pulltest.Context{AuthorValue: "alice"}, refused: []string{"network"}, reason: "approving review"},
		{name: "approval by the author does not count", layers: []config.Layer{strict(network, config.Approved)},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: locked,
			pr:      pulltest.Context{AuthorValue: "alice", ReviewsValue: []pull.Review{{Author: "alice", State: "APPROVED", CommitID: head}}},
			refused: []string{"network"}, reason: "approving review"},
		{name: "approval withdrawn by changes requested", layers: []config.Layer{strict(network, config.Approved)},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: locked,
			pr: pulltest.Context{AuthorValue: "alice", ReviewsValue: []pull.Review{
				{Author: "bob", State: "APPROVED", CommitID: head}, {Author: "bob", State: "CHANGES_REQUESTED", CommitID: head}}},
			refused: []string{"network"}, reason: "approving review"},
		{name: "approved by a writer, of the head", layers: []config.Layer{strict(network, config.Approved)},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: locked,
			pr: pulltest.Context{AuthorValue: "alice", PermissionsValue: writers,
				ReviewsValue: []pull.Review{{Author: "bob", State: "APPROVED", CommitID: head}}},
			run: []string{"network"}},
		{name: "approved by a reader: does not count", layers: []config.Layer{strict(network, config.Approved)},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: locked,
			pr: pulltest.Context{AuthorValue: "alice", PermissionsValue: writers,
				ReviewsValue: []pull.Review{{Author: "rita", State: "APPROVED", CommitID: head}}},
			refused: []string{"network"}, reason: "@rita has read permission, so their approval does not count"},
		{name: "approved by a stranger: does not count", layers: []config.Layer{strict(network, config.Approved)},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: locked,
			pr: pulltest.Context{AuthorValue: "alice", PermissionsValue: writers,
				ReviewsValue: []pull.Review{{Author: "sam", State: "APPROVED", CommitID: head}}},
			refused: []string{"network"}, reason: "@sam has no permission"},
		{name: "approval of an earlier commit: does not count", layers: []config.Layer{strict(network, config.Approved)},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: locked,
			pr: pulltest.Context{AuthorValue: "alice", PermissionsValue: writers,
				ReviewsValue: []pull.Review{{Author: "bob", State: "APPROVED", CommitID: oldHead}}},
			refused: []string{"network"}, reason: "@bob approved 0000000, not the head 1111111"},
		{name: "approval dismissed later: does not count", layers: []config.Layer{strict(network, config.Approved)},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: locked,
			pr: pulltest.Context{AuthorValue: "alice", PermissionsValue: writers,
				ReviewsValue: []pull.Review{{Author: "bob", State: "APPROVED", CommitID: head}, {Author: "bob", State: "DISMISSED", CommitID: head}}},
			refused: []string{"network"}, reason: "approving review by someone other than the author"},
		{name: "a comment after an approval keeps it", layers: []config.Layer{strict(network, config.Approved)},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: locked,
			pr: pulltest.Context{AuthorValue: "alice", PermissionsValue: writers,
				ReviewsValue: []pull.Review{{Author: "bob", State: "APPROVED", CommitID: head}, {Author: "bob", State: "COMMENTED", CommitID: head}}},
			run: []string{"network"}},
		{name: "one counting approval among ones that do not", layers: []config.Layer{strict(network, config.Approved)},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: locked,
			pr: pulltest.Context{AuthorValue: "alice", PermissionsValue: writers, ReviewsValue: []pull.Review{
				{Author: "alice", State: "APPROVED", CommitID: head}, {Author: "rita", State: "APPROVED", CommitID: head},
				{Author: "bob", State: "APPROVED", CommitID: head}}},
			run: []string{"network"}},
		{name: "mergeable: conflicts", layers: []config.Layer{strict(network, config.Mergeable)},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: locked,
			pr: pulltest.Context{ConflictValue: true}, refused: []string{"network"}, reason: "without conflicts"},
		{name: "mergeable: a failing check", layers: []config.Layer{strict(network, config.Mergeable)},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: locked,
			pr:      pulltest.Context{StatusesValue: []pull.Status{{Name: "ci/test", Outcome: "failure"}}},
			refused: []string{"network"}, reason: "`ci/test` is failure"},
		{name: "mergeable: Strata's own pending or failing checks do not count", layers: []config.Layer{strict(network, config.Mergeable)},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: locked,
			pr:  pulltest.Context{StatusesValue: []pull.Status{{Name: "strata/applied", Outcome: ""}, {Name: "strata/plan: dns", Outcome: "failure"}, {Name: "ci/test", Outcome: "success"}}},
			run: []string{"network"}},
		{name: "undiverged: behind the base", layers: []config.Layer{strict(network, config.Undiverged)},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: locked,
			pr: pulltest.Context{BehindByValue: 2}, refused: []string{"network"}, reason: "2 commits ahead"},
		{name: "depends on a planned, unapplied layer", layers: []config.Layer{app},
			plans: []*store.Plan{plan("app", head, true, false), plan("network", head, true, false)}, locks: locked,
			refused: []string{"app"}, reason: "apply `network` first"},
		{name: "depends on a layer without changes", layers: []config.Layer{app},
			plans: []*store.Plan{plan("app", head, true, false), plan("network", head, false, false)}, locks: locked, run: []string{"app"}},
		{name: "both together: dependency first", layers: []config.Layer{app, network},
			plans: []*store.Plan{plan("app", head, true, false), plan("network", head, true, false)}, locks: locked,
			run: []string{"network", "app"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.pr.Head = head
			reqs, err := readRequirements(context.Background(), &tc.pr, tc.layers)
			if err != nil {
				t.Fatal(err)
			}
			if tc.locks == nil {
				tc.locks = map[string]int{}
			}
			d := decideApply(applyFacts{PR: 7, Head: head, Layers: tc.layers, All: all, Plans: tc.plans, Locks: tc.locks, Requirements: reqs})
			switch {
			case tc.reply != "":
				if !strings.Contains(d.Reply, tc.reply) || d.Run != nil || d.Refuse != nil {
					t.Errorf("decision = %+v, want a reply with %q", d, tc.reply)
				}
			case tc.refused != nil:
				if !slices.Equal(d.Refuse, tc.refused) || !strings.Contains(d.Reason, tc.reason) || d.Run != nil {
					t.Errorf("decision = %+v, want %v refused with %q", d, tc.refused, tc.reason)
				}
			default:
				if !slices.Equal(names(d.Run), tc.run) || d.Refuse != nil || d.Reply != "" {
					t.Errorf("decision = %+v, want %v run", d, tc.run)
				}
			}
		})
	}
}

// Only the facts the layers' requirements name are read.
func TestReadRequirementsReadsOnlyWhatIsRequired(t *testing.T) {
	boom := errors.New("not to be read")
	pr := &pulltest.Context{ReviewsErr: boom, StatusesErr: boom, BehindByErr: boom}
	if _, err := readRequirements(context.Background(), pr, []config.Layer{network}); err != nil {
		t.Errorf("read facts no layer requires: %v", err)
	}
	l := network
	l.ApplyRequirements = []config.ApplyRequirement{config.Undiverged}
	if _, err := readRequirements(context.Background(), pr, []config.Layer{l}); !errors.Is(err, boom) {
		t.Errorf("undiverged did not read how far behind the PR is: %v", err)
	}
}

func TestDependencyCycleIsRefused(t *testing.T) {
	a := config.Layer{Name: "a", DependsOn: []string{"b"}}
	b := config.Layer{Name: "b", DependsOn: []string{"a"}}
	d := decideApply(applyFacts{PR: 1, Head: head, Layers: []config.Layer{a, b},
		Plans: []*store.Plan{plan("a", head, false, false), plan("b", head, false, false)}, Locks: map[string]int{"a": 1, "b": 1}})
	if !strings.Contains(d.Reason, "cycle") || len(d.Refuse) != 2 {
		t.Errorf("decision = %+v, want both refused for the cycle", d)
	}
}

// /apply without names applies every layer the PR planned.
func TestApplyTargets(t *testing.T) {
	got, why := applyTargets(all, nil, []*store.Plan{plan("app", head, true, false), plan("network", oldHead, true, false)})
	if why != "" || !slices.Equal(names(got), []string{"network", "app"}) {
		t.Errorf("got %v %q", names(got), why)
	}
	if _, why := applyTargets(all, nil, nil); !strings.Contains(why, "no plan to apply") {
		t.Errorf("without plans: %q", why)
	}
	if _, why := applyTargets(all, []string{"nope"}, nil); !strings.Contains(why, "no layer `nope`") {
		t.Errorf("unknown layer: %q", why)
	}
}

func TestUnlockTargets(t *testing.T) {
	held := []*store.Lock{{Layer: "network"}, {Layer: "dns"}}
	layersOf := func(ls []*store.Lock) []string {
		var out []string
		for _, l := range ls {
			out = append(out, l.Layer)
		}
		return out
	}
	for _, tc := range []struct {
		named, want []string
	}{
		{nil, []string{"network", "dns"}},
		{[]string{"dns"}, []string{"dns"}},
		{[]string{"app"}, nil},
	} {
		if got := layersOf(unlockTargets(held, tc.named)); !slices.Equal(got, tc.want) {
			t.Errorf("/unlock %v released %v, want %v", tc.named, got, tc.want)
		}
	}
}

func TestLockOutcome(t *testing.T) {
	for _, tc := range []struct {
		name     string
		held     store.Lock
		acquired bool
		want     lockOutcome
	}{
		{"another PR holds it", store.Lock{PR: 8, CheckRunID: 5, HeadSHA: head}, false, lockBlocked},
		{"just taken: no check yet", store.Lock{PR: 7, HeadSHA: head}, true, lockMove},
		{"held, check on this head", store.Lock{PR: 7, CheckRunID: 5, HeadSHA: head}, true, lockShown},
		{"held, check on an older head", store.Lock{PR: 7, CheckRunID: 5, HeadSHA: oldHead}, true, lockMove},
	} {
		if got := lockOutcomeOf(&tc.held, tc.acquired, head); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestPlanOutcome(t *testing.T) {
	tfErr := &terraform.Error{Command: "plan", Message: "boom"}
	infra := errors.New("fetch: connection reset")
	interrupted := &terraform.Error{Command: "plan", Message: "interrupted"}
	for _, tc := range []struct {
		name              string
		stopped, err      error
		attempt, attempts int
		want              planOutcome
	}{
		{"planned", nil, nil, 1, 3, planPlanned},
		{"superseded wins over an error", errSuperseded, tfErr, 1, 3, planSuperseded},
		{"cancelled while terraform ran: its interrupt is no failure", cancelledBy{User: "alice"}, interrupted, 1, 3, planCancelled},
		{"cancelled after terraform finished", cancelledBy{User: "alice"}, nil, 1, 3, planCancelled},
		{"cancelled on the last attempt of a failing fetch", cancelledBy{User: "alice"}, infra, 3, 3, planCancelled},
		{"the job's deadline is no cancel", context.DeadlineExceeded, infra, 3, 3, planInfraFailed},
		{"terraform failed: no retry", nil, tfErr, 1, 3, planToolFailed},
		{"no binary satisfies required_version: no retry", nil, &terraform.VersionError{Message: "none"}, 1, 3, planToolFailed},
		{"infrastructure, attempts left", nil, infra, 2, 3, planRetry},
		{"infrastructure, last attempt", nil, infra, 3, 3, planInfraFailed},
		{"GitHub's rate limit, last attempt: the queue waits for its reset", nil,
			fmt.Errorf("update the check: %w", &ghretry.LimitError{Reason: ghretry.PrimaryRateLimit}), 3, 3, planRetry},
		{"no sandbox on this kernel: no retry", nil, sandbox.Protect(sandbox.Facts{}, sandbox.Settings{}).Err(), 1, 3, planInfraFailed},
	} {
		if got := planOutcomeOf(tc.stopped, tc.err, tc.attempt, tc.attempts); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// /cancel's reply lists the plans it cancelled, and the applies it left.
func TestCancelReply(t *testing.T) {
	got := cancelReply("alice", []string{"network", "dns"}, []string{"app"})
	for _, want := range []string{"@alice cancelled the queued and running plans", "- `network`\n- `dns`", "The locks stay",
		"Not cancelled: the apply of `app`, which started"} {
		if !strings.Contains(got, want) {
			t.Errorf("reply lacks %q:\n%s", want, got)
		}
	}
	if got := cancelReply("alice", nil, nil); got != "@alice this pull request has no queued or running plan to cancel." {
		t.Errorf("nothing to cancel: %q", got)
	}
}
