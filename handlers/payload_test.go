package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"reflect"
	"testing"

	"github.com/google/go-github/v60/github"

	"strata.dev/strata/githubtest"
)

// payloads are one delivery of each event a handler takes, as the fake
// GitHub builds them (checked against GitHub's webhook schemas), with the
// type its handler decodes it into.
func payloads(t testing.TB) []struct {
	name, event string
	body        []byte
	into        func() any
} {
	gh := githubtest.NewServer(t)
	repo := gh.AddRepo("acme", "infra")
	repo.Commit("feature", map[string]string{"main.tf": "# v2\n"}, "change")
	pr := repo.OpenPR("feature", "main", "alice")
	before := repo.Branch("main")
	repo.Commit("main", map[string]string{"README.md": "v2\n"}, "docs")

	client := github.NewClient(nil).WithAuthToken(gh.Token())
	base, err := url.Parse(gh.APIURL())
	if err != nil {
		t.Fatal(err)
	}
	client.BaseURL = base
	run, _, err := client.Checks.CreateCheckRun(context.Background(), "acme", "infra", github.CreateCheckRunOptions{
		Name: "strata/plan: network", HeadSHA: pr.HeadSHA(),
		Actions: []*github.CheckRunAction{{Label: "Apply", Description: "Apply this plan", Identifier: "apply"}},
	})
	if err != nil {
		t.Fatal(err)
	}

	type payload = struct {
		name, event string
		body        []byte
		into        func() any
	}
	var ps []payload
	add := func(name string, into func() any, p githubtest.Payload, event string) {
		body, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, payload{name, event, body, into})
	}
	p, e := repo.IssueCommentEvent(pr.Number, "alice", "/plan -target=network")
	add("issue comment", into[issueCommentEvent], p, e)
	p, e = repo.PullRequestEvent("opened", pr.Number)
	add("pull request", into[github.PullRequestEvent], p, e)
	p, e = repo.PullRequestReviewEvent(pr.Number, repo.AddReview(pr.Number, "carol", "APPROVED"))
	add("review", into[github.PullRequestReviewEvent], p, e)
	p, e = repo.PushEvent("main", before, "")
	add("push", into[github.PushEvent], p, e)
	p, e = repo.CheckRunEvent("requested_action", run.GetID(), "apply", "bob")
	add("check run", into[github.CheckRunEvent], p, e)
	p, e = repo.QueueGroup(pr.Number).MergeGroupEvent("checks_requested", "")
	add("merge group", into[github.MergeGroupEvent], p, e)
	return ps
}

func into[T any]() any { return new(T) }

// The handlers parse with decode, not encoding/json: each event's payload
// must come out the same, field for field.
func TestDecodeIsEncodingJSON(t *testing.T) {
	for _, p := range payloads(t) {
		t.Run(p.name, func(t *testing.T) {
			want, got := p.into(), p.into()
			if err := json.Unmarshal(p.body, want); err != nil {
				t.Fatal(err)
			}
			if err := decode(p.event, p.body, got); err != nil {
				t.Fatal(err)
			}
			if reflect.ValueOf(want).Elem().IsZero() {
				t.Fatalf("encoding/json read nothing of %s", p.body)
			}
			if !reflect.DeepEqual(got, want) {
				w, _ := json.Marshal(want)
				g, _ := json.Marshal(got)
				t.Errorf("decode differs from encoding/json:\n got %s\nwant %s", g, w)
			}
		})
	}
}

// A signed payload that is not its event's shape is a PayloadError (the
// server answers 400, GitHub does not retry), whatever the parser says.
func TestDecodeRefusesAnotherShape(t *testing.T) {
	for _, body := range []string{`{"ref": 1}`, `{"ref": "refs/heads/main"`, `[]`, ``} {
		err := decode("push", []byte(body), new(github.PushEvent))
		var pe *PayloadError
		if !errors.As(err, &pe) || pe.Event != "push" {
			t.Errorf("decode(%q) = %v, want a PayloadError of push", body, err)
		}
	}
}

// BenchmarkDecodePayload is what parsing an issue_comment delivery costs
// (a 10 kB payload, of which Strata reads a dozen fields), with
// encoding/json and with decode. docs/benchmarks.md, Webhook intake.
func BenchmarkDecodePayload(b *testing.B) {
	p := payloads(b)[0]
	for _, parse := range []struct {
		name string
		fn   func([]byte, any) error
	}{
		{"encoding_json", json.Unmarshal},
		{"decode", func(body []byte, v any) error { return decode(p.event, body, v) }},
	} {
		b.Run(parse.name, func(b *testing.B) {
			b.SetBytes(int64(len(p.body)))
			b.ReportAllocs()
			for b.Loop() {
				var e issueCommentEvent
				if err := parse.fn(p.body, &e); err != nil {
					b.Fatal(err)
				}
				if e.Comment.Body != "/plan -target=network" {
					b.Fatalf("body %q", e.Comment.Body)
				}
			}
		})
	}
}
