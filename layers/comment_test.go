package layers

import (
	"strings"
	"testing"
	"unicode/utf8"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/policy"
)

const planned = "abc1234def5678abc1234def5678abc1234def56"

// createText is Terraform's text of a plan that creates one resource.
const createText = "Terraform will perform the following actions:\n\n" +
	"  # terraform_data.x will be created\n  + resource \"terraform_data\" \"x\" {\n      + id = (known after apply)\n    }\n\n" +
	"Plan: 1 to add, 0 to change, 0 to destroy.\n"

func withChanges(text string) *terraform.PlanResult {
	return &terraform.PlanResult{HasChanges: true, Add: 1, Changed: []string{"terraform_data.x"}, Text: text}
}

var noChanges = &terraform.PlanResult{Text: "No changes. Your infrastructure matches the configuration.\n\n" +
	"Terraform has compared your real infrastructure against your configuration and found no differences, so no changes are needed.\n"}

func at(dir string) layerAt { return layerAt{Dir: dir, Workspace: "default", HeadSHA: planned} }

func TestPlanComment(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layers []layerReport
		// want are in the comment; lines are whole lines of it.
		want, lines, absent []string
		plans               int // "Plan:" lines
	}{
		{
			name: "PR plans two layers, one with changes -> the other is one line",
			layers: []layerReport{
				{Layer: "network", layerAt: at("infra/network"), Result: withChanges(createText), LogURL: "https://strata.example/runs/1"},
				{Layer: "app", layerAt: at("infra/app"), Result: noChanges, LogURL: "https://strata.example/runs/2"},
			},
			want: []string{
				"**Terraform plan:** 2 layers, 1 with changes\n",
				"<details><summary><b>network</b> (<code>infra/network</code>, workspace <code>default</code>, at <code>abc1234</code>): Plan: 1 to add, 0 to change, 0 to destroy</summary>\n",
				"\n+   resource \"terraform_data\" \"x\" {\n+       id = (known after apply)\n",
				"[Full log](https://strata.example/runs/1)",
			},
			lines: []string{
				"Next: `/apply network` to apply, `/unlock network` to drop the plan and the lock.",
				"✅ **app** (`infra/app`, workspace `default`, at `abc1234`): no changes.",
			},
			absent: []string{"No changes. Your infrastructure", "Terraform has compared", "/apply app", "/unlock app", "runs/2", "`/apply` applies"},
			plans:  1,
		},
		{
			name: "two layers with changes -> each says its commands, and one /apply does both",
			layers: []layerReport{
				{Layer: "network", layerAt: at("infra/network"), Result: withChanges(createText)},
				{Layer: "infra/dns@blue", layerAt: layerAt{Dir: "infra/dns", Workspace: "blue", HeadSHA: planned}, Result: withChanges(createText)},
			},
			want: []string{"<b>infra/dns@blue</b> (<code>infra/dns</code>, workspace <code>blue</code>, at <code>abc1234</code>): Plan: 1 to add"},
			lines: []string{
				"Next: `/apply network` to apply, `/unlock network` to drop the plan and the lock.",
				"Next: `/apply infra/dns@blue` to apply, `/unlock infra/dns@blue` to drop the plan and the lock.",
				"To apply them all at once: `/apply` applies every layer this pull request has a plan of.",
			},
			plans: 2,
		},
		{
			name:   "a layer named by its dir -> the dir is not said twice",
			layers: []layerReport{{Layer: "infra/network", layerAt: at("infra/network"), Result: noChanges}},
			lines:  []string{"✅ **infra/network** (workspace `default`, at `abc1234`): no changes."},
		},
		{
			name:   "a layer that locks on apply -> no /unlock: the plan holds no lock",
			layers: []layerReport{{Layer: "network", layerAt: layerAt{Dir: "infra/network", Workspace: "default", HeadSHA: planned, LocksOnApply: true}, Result: withChanges(createText)}},
			lines:  []string{"Next: `/apply network` to apply; the layer locks on apply, so this plan holds no lock."},
			absent: []string{"/unlock"},
			plans:  1,
		},
		{
			name: "a layer that applies on merge -> merging applies it, /apply still can",
			layers: []layerReport{{Layer: "network", layerAt: layerAt{Dir: "infra/network", Workspace: "default", HeadSHA: planned, OnMerge: true},
				Result: withChanges(createText)}},
			lines: []string{"Next: merging applies it: Strata plans the merge commit and applies that plan only if it makes these changes " +
				"(`/apply network` applies it now instead, `/unlock network` drops the plan and the lock)."},
			plans: 1,
		},
		{
			name: "applies on merge and locks on apply -> no /unlock",
			layers: []layerReport{{Layer: "network", layerAt: layerAt{Dir: "infra/network", Workspace: "default", HeadSHA: planned, OnMerge: true, LocksOnApply: true},
				Result: withChanges(createText)}},
			lines: []string{"Next: merging applies it: Strata plans the merge commit and applies that plan only if it makes these changes " +
				"(`/apply network` applies it now instead)."},
			absent: []string{"/unlock"},
			plans:  1,
		},
		{
			name: "applies on merge, code owners missing -> they must approve before the merge applies it",
			layers: []layerReport{{Layer: "network", layerAt: layerAt{Dir: "infra/network", Workspace: "default", HeadSHA: planned, OnMerge: true},
				Result: withChanges(createText), CodeOwners: "still needed: `infra/network/main.tf` by `@acme/network`"}},
			lines: []string{"Next: code owners must approve first, as neither `/apply network` nor the merge would apply it now: " +
				"still needed: `infra/network/main.tf` by `@acme/network`. Then merging applies it: Strata plans the merge commit and applies that plan " +
				"only if it makes these changes (`/apply network` applies it now instead, `/unlock network` drops the plan and the lock)."},
			plans: 1,
		},
		{
			name:   "applies on merge, no changes -> one line as any other",
			layers: []layerReport{{Layer: "network", layerAt: layerAt{Dir: "infra/network", Workspace: "default", HeadSHA: planned, OnMerge: true}, Result: noChanges}},
			lines:  []string{"✅ **network** (`infra/network`, workspace `default`, at `abc1234`): no changes."},
			absent: []string{"merging applies"},
		},
		{
			name: "failed, blocked and cancelled -> each says why and what to do",
			layers: []layerReport{
				{Layer: "db<prod>", layerAt: at("infra/db"), Error: "terraform init: Error: Unsupported Terraform Core version", LogURL: "https://strata.example/runs/3"},
				{Layer: "network", layerAt: at("infra/network"), BlockedBy: 42, Error: "Locked by #42: https://github.example/acme/infra/pull/42"},
				{Layer: "app", layerAt: at("infra/app"), Cancelled: true, Error: "cancelled: the pull request has a newer head commit"},
			},
			want: []string{
				"**Terraform plan:** 3 layers, 0 with changes, 3 failed\n",
				"<details open><summary>❌ <b>db&lt;prod&gt;</b> (<code>infra/db</code>, workspace <code>default</code>, at <code>abc1234</code>): failed</summary>",
				"Unsupported Terraform Core version",
				"[Full log](https://strata.example/runs/3)",
				"<b>network</b> (<code>infra/network</code>, workspace <code>default</code>, at <code>abc1234</code>): blocked</summary>",
				"Locked by #42: https://github.example/acme/infra/pull/42",
				"<b>app</b> (<code>infra/app</code>, workspace <code>default</code>, at <code>abc1234</code>): cancelled</summary>",
				"cancelled: the pull request has a newer head commit",
			},
			lines: []string{
				"Next: `/plan db<prod>` to plan again once the cause is fixed, `/unlock db<prod>` to drop the lock.",
				"Next: once #42 is merged or closed, or releases the lock with `/unlock network`, comment `/plan network` again.",
				"Next: `/plan app` to plan it again.",
			},
			absent: []string{"/apply"},
		},
		{
			name: "a report stored before the place was -> no empty parentheses",
			layers: []layerReport{
				{Layer: "network", Result: noChanges},
			},
			lines: []string{"✅ **network**: no changes."},
		},
		{
			name: "outputs after the Plan: line stay, without a doubled blank line",
			layers: []layerReport{{Layer: "network", layerAt: at("infra/network"), Result: withChanges(
				strings.TrimSuffix(createText, "\n") + "\n\nChanges to Outputs:\n  + id = (known after apply)\n")}},
			want:  []string{"    }\n\nChanges to Outputs:\n+   id = (known after apply)\n```"},
			plans: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := planComment(tc.layers)
			for _, want := range tc.want {
				if !strings.Contains(c, want) {
					t.Errorf("comment lacks %q:\n%s", want, c)
				}
			}
			for _, line := range tc.lines {
				if !strings.Contains("\n"+c, "\n"+line+"\n") {
					t.Errorf("comment lacks the line %q:\n%s", line, c)
				}
			}
			for _, s := range tc.absent {
				if strings.Contains(c, s) {
					t.Errorf("comment has %q:\n%s", s, c)
				}
			}
			if n := strings.Count(c, "Plan:"); n != tc.plans {
				t.Errorf("%d \"Plan:\", want %d:\n%s", n, tc.plans, c)
			}
			if strings.Count(c, "<details") != strings.Count(c, "</details>") {
				t.Errorf("unbalanced <details>:\n%s", c)
			}
		})
	}
}

// A replaced or destroyed resource is flagged on the collapsed line, and
// listed once it is opened.
func TestPlanCommentFlagsDestroys(t *testing.T) {
	r := &terraform.PlanResult{HasChanges: true, Destroy: 1, Destroyed: []string{"terraform_data.old"}, Changed: []string{"terraform_data.old"},
		Text: "  - resource \"terraform_data\" \"old\" {}\n\nPlan: 0 to add, 0 to change, 1 to destroy.\n"}
	c := planComment([]layerReport{{Layer: "network", layerAt: at("infra/network"), Result: r}})
	for _, want := range []string{"<summary>⚠️ <b>network</b>", "⚠️ **1 to destroy**: `terraform_data.old`", "-   resource"} {
		if !strings.Contains(c, want) {
			t.Errorf("comment lacks %q:\n%s", want, c)
		}
	}
	if n := strings.Count(c, "Plan:"); n != 1 {
		t.Errorf("%d \"Plan:\", want 1:\n%s", n, c)
	}
}

// The cut itself, at other limits, is terraform.PlanComment's
// (engine/terraform/comment_test.go); here, what the server adds stays.
func TestPlanCommentFitsTheLimitByCuttingPlanTexts(t *testing.T) {
	big := strings.Repeat("  + resource \"terraform_data\" \"é\" {}\n", 5000)
	layers := []layerReport{
		{Layer: "small", layerAt: at("s"), Result: &terraform.PlanResult{HasChanges: true, Add: 1, Text: "  + small\n"}},
		{Layer: "big1", layerAt: at("b1"), Result: &terraform.PlanResult{HasChanges: true, Add: 5000, Text: big}, LogURL: "https://x/1"},
		{Layer: "big2", layerAt: at("b2"), Result: &terraform.PlanResult{HasChanges: true, Add: 5000, Text: big}},
	}
	c := planComment(layers)
	if len(c) > markdown.MaxBytes || !utf8.ValidString(c) {
		t.Errorf("comment is %d bytes, valid UTF-8 %v", len(c), utf8.ValidString(c))
	}
	if !strings.Contains(c, "+   small\n") || strings.Count(c, "… plan cut to fit in a comment") != 2 ||
		!strings.Contains(c, "… plan cut to fit in a comment; see the full log") {
		t.Errorf("the small plan must stay whole and both big ones be cut:\n%s", c[:min(len(c), 2000)])
	}
	// What to do next is never cut.
	if strings.Count(c, "</details>") != 3 || !strings.Contains(c, "`/unlock big2` to drop the plan and the lock.") ||
		!strings.HasSuffix(c, "`/apply` applies every layer this pull request has a plan of.\n") {
		t.Errorf("a layer lost its end:\n%s", markdown.Tail(c, 2000))
	}
}

// An error message is not given a share of the room: when one is too long,
// the comment is cut inside its fence, and the fence is closed.
func TestPlanCommentCutInsideAnErrorClosesItsFence(t *testing.T) {
	msg := "terraform plan: Error: " + strings.Repeat("ünïcödé detail\n", 8000)
	c := planComment([]layerReport{
		{Layer: "quiet", Result: noChanges},
		{Layer: "broken", Error: msg},
	})
	if len(c) > markdown.MaxBytes || !utf8.ValidString(c) {
		t.Fatalf("comment is %d bytes, valid UTF-8 %v", len(c), utf8.ValidString(c))
	}
	if !strings.HasSuffix(c, "\n```\n\n\n… comment cut to fit") {
		t.Errorf("the error's fence is not closed before the note:\n%s", markdown.Tail(c, 200))
	}
	if n := strings.Count("\n"+c, "\n```"); n%2 != 0 {
		t.Errorf("%d fence lines: one is left open", n)
	}
}

// The whole comment of a batch, as the pull request shows it: the
// sections are terraform.PlanComment's, the policy findings and the next
// steps the server's.
func TestPlanCommentWhole(t *testing.T) {
	blocking := &policyReport{Sets: []setOutcome{{Name: "tags", Enforcement: config.Block, Owners: []string{"@acme/platform"}, DenialCount: 1,
		Denials: []policy.Finding{{Kind: "deny", Rule: "tags", Address: "terraform_data.x", Msg: "missing the `owner` tag | here"}}}}}
	got := planComment([]layerReport{
		{Layer: "network", layerAt: at("infra/network"), Result: withChanges(createText), LogURL: "https://strata.example/runs/1", Policy: blocking},
		{Layer: "app", layerAt: at("infra/app"), Result: noChanges},
		{Layer: "dns", layerAt: layerAt{Dir: "infra/dns", Workspace: "default", HeadSHA: planned, LocksOnApply: true}, Result: withChanges(createText)},
		{Layer: "db", layerAt: at("infra/db"), BlockedBy: 42, Error: "Locked by #42"},
	})
	want := "**Terraform plan:** 4 layers, 2 with changes, 1 failed\n" +
		"\n" +
		"<details><summary><b>network</b> (<code>infra/network</code>, workspace <code>default</code>, at <code>abc1234</code>): Plan: 1 to add, 0 to change, 0 to destroy</summary>\n" +
		"\n" +
		"Changed resources:\n" +
		"- `terraform_data.x`\n" +
		"\n" +
		"```diff\n" +
		"Terraform will perform the following actions:\n" +
		"\n" +
		"  # terraform_data.x will be created\n" +
		"+   resource \"terraform_data\" \"x\" {\n" +
		"+       id = (known after apply)\n" +
		"    }\n" +
		"```\n" +
		"\n" +
		"[Full log](https://strata.example/runs/1)\n" +
		"\n" +
		"</details>\n" +
		"\n" +
		"❌ **tags** (block, owners @acme/platform): 1 denial, 0 warnings\n" +
		"\n" +
		"| | address | message |\n" +
		"| --- | --- | --- |\n" +
		"| deny | `terraform_data.x` | ``missing the `owner` tag ｜ here`` |\n" +
		"\n" +
		"⛔ Blocked by policy: `/approve-policies network` from an owner of each set that denies the plan: set `tags` by @acme/platform.\n" +
		"\n" +
		"Next: `/apply network` to apply, `/unlock network` to drop the plan and the lock.\n" +
		"\n" +
		"✅ **app** (`infra/app`, workspace `default`, at `abc1234`): no changes.\n" +
		"\n" +
		"<details><summary><b>dns</b> (<code>infra/dns</code>, workspace <code>default</code>, at <code>abc1234</code>): Plan: 1 to add, 0 to change, 0 to destroy</summary>\n" +
		"\n" +
		"Changed resources:\n" +
		"- `terraform_data.x`\n" +
		"\n" +
		"```diff\n" +
		"Terraform will perform the following actions:\n" +
		"\n" +
		"  # terraform_data.x will be created\n" +
		"+   resource \"terraform_data\" \"x\" {\n" +
		"+       id = (known after apply)\n" +
		"    }\n" +
		"```\n" +
		"\n" +
		"</details>\n" +
		"\n" +
		"Next: `/apply dns` to apply; the layer locks on apply, so this plan holds no lock.\n" +
		"\n" +
		"<details open><summary>❌ <b>db</b> (<code>infra/db</code>, workspace <code>default</code>, at <code>abc1234</code>): blocked</summary>\n" +
		"\n" +
		"```\n" +
		"Locked by #42\n" +
		"```\n" +
		"\n" +
		"</details>\n" +
		"\n" +
		"Next: once #42 is merged or closed, or releases the lock with `/unlock db`, comment `/plan db` again.\n" +
		"\n" +
		"To apply them all at once: `/apply` applies every layer this pull request has a plan of.\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
