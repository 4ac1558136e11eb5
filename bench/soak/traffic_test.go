package soak

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"strata.dev/strata/engine/hydrate/hydratetest"
	"strata.dev/strata/engine/terraform/terraformtest"
	"strata.dev/strata/githubtest"
	"strata.dev/strata/store"
)

// The traffic: one action every tick, in this order, whatever Strata is
// doing (open loop). A step moves one layer's pull request on (opened and
// autoplanned, /plan, a second PR blocked by the lock, /apply, merged); a
// push changes the sync's source on main and is hydrated; a stream follows
// a plan's log in the web UI as a logged-in user. A step no lane is ready
// for, a push while the last hydration runs, or a stream with four open
// become a /help comment: the rate stays fixed.
const tick = 1500 * time.Millisecond

type action int

const (
	step action = iota
	push
	help
	stream
)

var actions = []action{step, push, step, help, step, stream}

const (
	lanes    = 3
	planName = "strata/plan: "
	hydrated = "strata/hydrate: dev"
)

// phase is where a lane's pull request is; each step moves it to the next.
type phase int

const (
	idle        phase = iota // no PR: the next step opens one
	opened                   // its autoplan runs; next: /plan
	planned                  // /plan runs; next: a contender, or /apply
	contended                // a second PR was opened on the locked layer
	uncontended              // and closed; next: /apply
	applying                 // /apply runs; next: merge
)

// lane is one layer and the pull requests that change it, one at a time.
type lane struct {
	layer, state, marker string
	phase                phase
	cycle                int
	pr, contender        *githubtest.PR

	// mu guards what the lock watcher reads.
	mu       sync.Mutex
	holder   int  // the PR whose plan took the layer's lock
	closed   bool // the holder was merged
	lockSeen bool // the watcher saw the holder's lock
	blocked  map[int]bool
}

// request is one thing Strata was asked that must show as one check.
type request struct {
	kind   string // plan, blocked, apply, hydrate
	sha    string
	check  string
	pr     int
	holder int // blocked: the PR that holds the lock
}

// want is what a pull request must show at the end.
type want struct {
	plans, applies, helps int
	marker, name          string // the lane's provisioner log: a line with name per apply of this PR
}

type driver struct {
	t     *testing.T
	gh    *githubtest.Server
	repo  *githubtest.Repo
	st    *store.Store
	hook  *server
	ui    *ui
	lanes []*lane

	chatter  *githubtest.PR
	next     int // the lane the next step tries first
	replicas int // of the hydrated Deployment, changed by each push
	lastPush string
	ticks    map[string]int

	requests []request
	wants    map[int]*want
}

// layerFile is a lane's layer: 20 resources whose input names the PR, and
// one whose replacement runs a provisioner that logs the PR to marker and
// takes 2 s (so that a replica is caught mid-apply).
func layerFile(state, marker, name string) string {
	return terraformtest.BackendBlock(state) + fmt.Sprintf(`
resource "terraform_data" "r" {
  count = 20
  input = "%[1]s-${count.index}"
}

resource "terraform_data" "applied" {
  triggers_replace = "%[1]s"
  provisioner "local-exec" {
    command = "echo %[1]s >> %[2]s; sleep 2"
  }
}
`, name, marker)
}

// seed fills acme/infra's main: the lanes' layers, the kustomize app and
// .strata.yaml; and opens the PR that /help comments go to.
func (d *driver) seed(stateDir string) {
	files := hydratetest.AppRepo()
	conf := "version: 1\nlayers:\n"
	for i := range lanes {
		l := &lane{layer: fmt.Sprintf("infra/l%d", i), blocked: map[int]bool{}}
		l.state = filepath.Join(stateDir, fmt.Sprintf("l%d", i), "terraform.tfstate")
		l.marker = filepath.Join(stateDir, fmt.Sprintf("l%d.applied", i))
		files[l.layer+"/main.tf"] = layerFile(l.state, l.marker, "main")
		conf += "  - dir: " + l.layer + "\n"
		d.lanes = append(d.lanes, l)
	}
	files[".strata.yaml"] = conf + "syncs:\n  - name: dev\n    source: deploy/overlays/dev\n    dest: {branch: hydrated, path: dev}\n"
	d.repo.Commit("main", files, "Layers and manifests")
	d.repo.Commit("chatter", map[string]string{"docs/README.md": "chatter\n"}, "Docs")
	d.chatter = d.repo.OpenPR("chatter", "main", "alice")
	d.wants = map[int]*want{d.chatter.Number: {}}
	d.ticks = map[string]int{}
}

// fire does the action of tick i.
func (d *driver) fire(i int) {
	switch actions[i%len(actions)] {
	case step:
		for k := range d.lanes {
			l := d.lanes[(d.next+k)%len(d.lanes)]
			if d.ready(l) {
				d.next = (d.next + k + 1) % len(d.lanes)
				d.advance(l)
				d.ticks["step"]++
				return
			}
		}
	case push:
		if d.lastPush == "" || d.completed(d.lastPush, hydrated, 1) {
			d.push()
			d.ticks["push"]++
			return
		}
	case stream:
		if d.stream() {
			d.ticks["stream"]++
			return
		}
	}
	d.comment(d.chatter.Number, "/help")
	d.wants[d.chatter.Number].helps++
	d.ticks["help"]++
}

// send delivers a webhook to replica a: a killed replica would refuse it,
// and the jobs it enqueues run on either.
func (d *driver) send(payload githubtest.Payload, event string) {
	d.hook.Deliver(d.t, payload, event)
}

func (d *driver) comment(pr int, body string) {
	d.send(d.repo.IssueCommentEvent(pr, "alice", body))
}

// push changes the Deployment's replicas on main: an input of the sync.
func (d *driver) push() {
	d.replicas = d.replicas%9 + 1
	before := d.repo.Branch("main")
	after := d.repo.Commit("main", map[string]string{"deploy/overlays/dev/replicas.yaml": hydratetest.Replicas(d.replicas)}, "Scale")
	d.send(d.repo.PushEvent("main", before, after))
	d.requests = append(d.requests, request{kind: "hydrate", sha: after, check: hydrated})
	d.lastPush = after
}

// ready says whether a lane's last step is done, from the fake GitHub:
// the checks completed and the comments written.
func (d *driver) ready(l *lane) bool {
	switch l.phase {
	case idle:
		_, err := d.st.Lock(context.Background(), "acme/infra", l.layer)
		return errors.Is(err, store.ErrNotFound)
	case opened:
		return d.completed(l.pr.HeadSHA(), planName+l.layer, 1) && d.comments(l.pr.Number, "Terraform plan:") == 1
	case planned:
		return d.completed(l.pr.HeadSHA(), planName+l.layer, 2) && d.comments(l.pr.Number, "Terraform plan:") == 2
	case contended:
		return d.completed(l.contender.HeadSHA(), planName+l.layer, 1)
	case uncontended:
		return true
	case applying:
		return d.completed(l.pr.HeadSHA(), "strata/apply: "+l.layer, 1) && d.comments(l.pr.Number, "Terraform apply") == 1
	}
	return false
}

// advance takes a ready lane's next step.
func (d *driver) advance(l *lane) {
	switch l.phase {
	case idle:
		l.cycle++
		branch := fmt.Sprintf("l%s-%d", l.layer[len("infra/l"):], l.cycle)
		d.repo.Commit(branch, map[string]string{l.layer + "/main.tf": layerFile(l.state, l.marker, branch)}, "Change "+l.layer)
		l.pr = d.repo.OpenPR(branch, "main", "alice")
		l.mu.Lock()
		l.holder, l.closed, l.lockSeen = l.pr.Number, false, false
		l.mu.Unlock()
		d.wants[l.pr.Number] = &want{marker: l.marker, name: branch}
		d.send(d.repo.PullRequestEvent("opened", l.pr.Number))
		d.plan(l, "plan")
		l.phase = opened
	case opened:
		d.comment(l.pr.Number, "/plan "+l.layer)
		d.plan(l, "plan")
		l.phase = planned
	case planned:
		if l.cycle%2 == 1 {
			branch := fmt.Sprintf("l%s-%d-contender", l.layer[len("infra/l"):], l.cycle)
			d.repo.Commit(branch, map[string]string{l.layer + "/main.tf": layerFile(l.state, l.marker, branch)}, "Contend "+l.layer)
			l.contender = d.repo.OpenPR(branch, "main", "bob")
			l.mu.Lock()
			l.blocked[l.contender.Number] = true
			l.mu.Unlock()
			// Its autoplan, blocked, still writes the plan comment, which
			// names the holder.
			d.wants[l.contender.Number] = &want{plans: 1, marker: l.marker, name: branch}
			d.send(d.repo.PullRequestEvent("opened", l.contender.Number))
			d.requests = append(d.requests, request{kind: "blocked", sha: l.contender.HeadSHA(), check: planName + l.layer, pr: l.contender.Number, holder: l.pr.Number})
			l.phase = contended
			return
		}
		d.apply(l)
	case contended:
		d.repo.ClosePR(l.contender.Number, false)
		d.send(d.repo.PullRequestEvent("closed", l.contender.Number))
		l.phase = uncontended
	case uncontended:
		d.apply(l)
	case applying:
		d.repo.ClosePR(l.pr.Number, true)
		l.mu.Lock()
		l.closed = true
		l.mu.Unlock()
		d.send(d.repo.PullRequestEvent("closed", l.pr.Number))
		l.phase = idle
	}
}

func (d *driver) plan(l *lane, kind string) {
	d.requests = append(d.requests, request{kind: kind, sha: l.pr.HeadSHA(), check: planName + l.layer, pr: l.pr.Number})
	d.wants[l.pr.Number].plans++
}

// apply asks for the apply of a planned layer; a layer whose last plan
// failed is merged without one (the end reports the failed plan).
func (d *driver) apply(l *lane) {
	crs := d.checks(l.pr.HeadSHA(), planName+l.layer)
	if len(crs) == 0 || crs[len(crs)-1].Conclusion != "success" {
		l.phase = applying
		d.advance(l)
		return
	}
	d.comment(l.pr.Number, "/apply "+l.layer)
	d.requests = append(d.requests, request{kind: "apply", sha: l.pr.HeadSHA(), check: "strata/apply: " + l.layer, pr: l.pr.Number})
	d.wants[l.pr.Number].applies++
	l.phase = applying
}

// stream opens the live log of a lane's latest plan in the web UI.
func (d *driver) stream() bool {
	l := d.lanes[d.ticks["stream"]%len(d.lanes)]
	run, err := d.st.LatestRun(context.Background(), "acme/infra", "layer_plan", l.layer)
	if err != nil {
		return false
	}
	return d.ui.follow(run.ID)
}

func (d *driver) checks(sha, name string) []githubtest.CheckRun {
	var out []githubtest.CheckRun
	for _, cr := range d.repo.CheckRuns(sha) {
		if cr.Name == name {
			out = append(out, cr)
		}
	}
	return out
}

// completed says whether sha has n checks named name, all completed.
func (d *driver) completed(sha, name string, n int) bool {
	crs := d.checks(sha, name)
	for _, cr := range crs {
		if cr.Status != "completed" {
			return false
		}
	}
	return len(crs) == n
}

// comments counts Strata's comments on pr that contain s.
func (d *driver) comments(pr int, s string) int {
	n := 0
	for _, c := range d.repo.Comments(pr) {
		if c.User == d.gh.BotLogin() && strings.Contains(c.Body, s) {
			n++
		}
	}
	return n
}

// settled says whether every request shows its checks, all completed,
// and every PR its comments: what verify then checks in detail.
func (d *driver) settled() bool {
	n := map[[2]string]int{}
	for _, r := range d.requests {
		n[[2]string{r.sha, r.check}]++
	}
	for k, want := range n {
		if !d.completed(k[0], k[1], want) {
			return false
		}
	}
	for pr, w := range d.wants {
		if d.comments(pr, "Terraform plan:") < w.plans || d.comments(pr, "Terraform apply") < w.applies || d.comments(pr, "Strata commands") < w.helps {
			return false
		}
	}
	return true
}
