package soak

import (
	"fmt"
	"os"
	"strings"
)

// verify asserts, once every job has ended, what each request must have
// left behind: exact counts, from the fake GitHub, the check log and the
// layers' provisioner logs.
func (s *soaker) verify(d *driver, cl *checkLog, streams map[string]int) {
	t := s.t
	type key struct{ sha, check string }
	groups := map[key][]request{}
	var order []key
	for _, r := range d.requests {
		k := key{r.sha, r.check}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	applied := map[int]string{} // PR -> its apply check's conclusion
	interrupted, repeated := 0, 0
	for _, k := range order {
		rs, crs := groups[k], d.checks(k.sha, k.check)
		if len(crs) != len(rs) {
			t.Errorf("%s at %.7s (#%d): %d checks for %d requests", k.check, k.sha, rs[0].pr, len(crs), len(rs))
			continue
		}
		for i, cr := range crs {
			r := rs[i]
			what := fmt.Sprintf("%s %d at %.7s (#%d)", k.check, cr.ID, k.sha, r.pr)
			n, wrong := cl.completions(cr.ID)
			if cr.Status != "completed" || n == 0 {
				t.Errorf("%s never completed: %s", what, cr.Status)
				continue
			}
			if wrong != "" {
				t.Errorf("%s completed, then %s", what, wrong)
			}
			if n > 1 {
				repeated++
			}
			switch r.kind {
			case "plan", "hydrate":
				if cr.Conclusion != "success" {
					t.Errorf("%s: %s %q\n%s", what, cr.Conclusion, cr.Title, cr.Summary)
				}
			case "blocked":
				if want := fmt.Sprintf("Locked by #%d", r.holder); cr.Conclusion != "failure" || cr.Title != want {
					t.Errorf("%s: %s %q, want failure %q", what, cr.Conclusion, cr.Title, want)
				}
			case "apply":
				applied[r.pr] = cr.Conclusion
				switch {
				case cr.Conclusion == "success":
				case cr.Conclusion == "failure" && cr.Title == "Apply interrupted":
					interrupted++
				default:
					t.Errorf("%s: %s %q\n%s", what, cr.Conclusion, cr.Title, cr.Summary)
				}
			}
		}
	}
	if k := s.killed("apply"); interrupted > k {
		t.Errorf("%d applies interrupted, by %d kills mid-apply", interrupted, k)
	}
	t.Logf("%d requests: every check created once and completed once; %d completed by more than one identical update; %d applies interrupted by a kill",
		len(d.requests), repeated, interrupted)

	for pr, w := range d.wants {
		for _, c := range []struct {
			what string
			want int
		}{{"Terraform plan:", w.plans}, {"Terraform apply", w.applies}, {"Strata commands", w.helps}} {
			if n := d.comments(pr, c.what); n != c.want {
				t.Errorf("#%d: %d comments with %q, want %d", pr, n, c.what, c.want)
			}
		}
		if w.marker == "" {
			continue
		}
		runs := applies(w.marker, w.name)
		switch applied[pr] {
		case "success":
			if runs != 1 {
				t.Errorf("#%d: its apply ran %d times, want once", pr, runs)
			}
		case "failure": // interrupted: before or after the provisioner started
			if runs > 1 {
				t.Errorf("#%d: its interrupted apply ran %d times", pr, runs)
			}
		default:
			if runs != 0 {
				t.Errorf("#%d: applied %d times without an apply", pr, runs)
			}
		}
	}

	s.mu.Lock()
	for _, l := range s.lost {
		t.Errorf("lock: %s", l)
	}
	// The last sample is at rest: no Terraform, build or sandbox left.
	for _, sv := range s.samples[len(s.samples)-1].servers {
		if sv.procs != 0 {
			t.Errorf("server %s#%d at rest: %d processes below it, want none", sv.name, sv.start, sv.procs)
		}
	}
	s.mu.Unlock()
	total := 0
	for _, n := range streams {
		total += n
	}
	if streams["done"] != total {
		t.Errorf("live logs: %v, want each of the %d done", streams, total)
	}
	t.Logf("live logs followed in the web UI: %d, each to its done event", total)
	for _, v := range d.gh.Violations() {
		t.Errorf("GitHub would refuse: %v", v)
	}
}

// applies counts the provisioner's lines of one PR in a lane's log.
func applies(marker, name string) int {
	b, _ := os.ReadFile(marker)
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if l == name {
			n++
		}
	}
	return n
}
