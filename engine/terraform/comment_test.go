package terraform

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"strata.dev/strata/engine/markdown"
)

// createText is Terraform's text of a plan that creates one resource.
const createText = "Terraform will perform the following actions:\n\n" +
	"  # terraform_data.x will be created\n  + resource \"terraform_data\" \"x\" {\n      + id = (known after apply)\n    }\n\n" +
	"Plan: 1 to add, 0 to change, 0 to destroy.\n"

var (
	creates   = &PlanResult{HasChanges: true, Add: 1, Changed: []string{"terraform_data.x"}, Text: createText}
	unchanged = &PlanResult{Text: "No changes. Your infrastructure matches the configuration.\n"}
)

func TestPlanCommentMarkdown(t *testing.T) {
	for _, tc := range []struct {
		name    string
		comment PlanComment
		want    string
	}{
		{
			name: "the CLI plans two layers, one with changes -> a section with its plan, and one line",
			comment: PlanComment{Layers: []LayerReport{
				{Layer: "network", Dir: "infra/network", Workspace: "default", Result: creates},
				{Layer: "app", Dir: "app", Workspace: "default", Result: unchanged},
			}},
			want: "**Terraform plan:** 2 layers, 1 with changes\n" +
				"\n" +
				"<details><summary><b>network</b> (<code>infra/network</code>, workspace <code>default</code>): Plan: 1 to add, 0 to change, 0 to destroy</summary>\n" +
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
				"✅ **app** (workspace `default`): no changes.\n",
		},
		{
			name: "the server's sections -> where, the log, what comes next and the end",
			comment: PlanComment{Layers: []LayerReport{
				{Layer: "network", Dir: "infra/network", Workspace: "default", Commit: "abc1234", Result: creates, LogURL: "https://strata.example/runs/1",
					Next: "Next: `/apply network` to apply."},
				{Layer: "infra/dns@blue", Dir: "infra/dns", Workspace: "blue", Commit: "abc1234", Result: creates, Next: "Next: `/apply infra/dns@blue` to apply."},
			}, End: "To apply them all at once: `/apply`."},
			want: "**Terraform plan:** 2 layers, 2 with changes\n" +
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
				"Next: `/apply network` to apply.\n" +
				"\n" +
				"<details><summary><b>infra/dns@blue</b> (<code>infra/dns</code>, workspace <code>blue</code>, at <code>abc1234</code>): Plan: 1 to add, 0 to change, 0 to destroy</summary>\n" +
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
				"Next: `/apply infra/dns@blue` to apply.\n" +
				"\n" +
				"To apply them all at once: `/apply`.\n",
		},
		{
			name: "failed, blocked, no plan -> open, each says why",
			comment: PlanComment{Layers: []LayerReport{
				{Layer: "db", Err: errors.New("terraform init: Error: Unsupported Terraform Core version"), LogURL: "https://strata.example/runs/3"},
				{Layer: "network", Stopped: "blocked", Err: errors.New("Locked by #42"), Next: "Next: once #42 is merged, `/plan network` again."},
				{Layer: "app"},
			}},
			want: "**Terraform plan:** 3 layers, 0 with changes, 3 failed\n" +
				"\n" +
				"<details open><summary>❌ <b>db</b>: failed</summary>\n" +
				"\n" +
				"```\n" +
				"terraform init: Error: Unsupported Terraform Core version\n" +
				"```\n" +
				"\n" +
				"[Full log](https://strata.example/runs/3)\n" +
				"\n" +
				"</details>\n" +
				"\n" +
				"<details open><summary>❌ <b>network</b>: blocked</summary>\n" +
				"\n" +
				"```\n" +
				"Locked by #42\n" +
				"```\n" +
				"\n" +
				"</details>\n" +
				"\n" +
				"Next: once #42 is merged, `/plan network` again.\n" +
				"\n" +
				"<details open><summary>❌ <b>app</b>: failed</summary>\n" +
				"\n" +
				"```\n" +
				"no plan\n" +
				"```\n" +
				"\n" +
				"</details>\n",
		},
		{
			name: "replaced, destroyed and outputs -> flagged on the summary line, listed inside",
			comment: PlanComment{Layers: []LayerReport{{Layer: "app", Result: &PlanResult{
				HasChanges: true, Add: 1, Destroy: 2, Replaced: []string{"terraform_data.server"}, Destroyed: []string{"terraform_data.old"},
				Changed: []string{"terraform_data.server", "terraform_data.old"}, Outputs: []OutputChange{{Name: "url", Action: "update"}},
				Text: "-/+ resource \"terraform_data\" \"server\" {}\n  - resource \"terraform_data\" \"old\" {}\n\nPlan: 1 to add, 0 to change, 2 to destroy.\n\nChanges to Outputs:\n  ~ url = \"a\" -> \"b\"\n",
			}}}},
			want: "**Terraform plan:** 1 layer, 1 with changes\n" +
				"\n" +
				"<details><summary>⚠️ <b>app</b>: Plan: 1 to add, 0 to change, 2 to destroy</summary>\n" +
				"\n" +
				"⚠️ **1 to replace** (destroyed, then created): `terraform_data.server`\n" +
				"\n" +
				"⚠️ **1 to destroy**: `terraform_data.old`\n" +
				"\n" +
				"Changed resources:\n" +
				"- `terraform_data.server`\n" +
				"- `terraform_data.old`\n" +
				"\n" +
				"Changed outputs: `url (update)`\n" +
				"\n" +
				"```diff\n" +
				"-/+ resource \"terraform_data\" \"server\" {}\n" +
				"-   resource \"terraform_data\" \"old\" {}\n" +
				"\n" +
				"Changes to Outputs:\n" +
				"!   url = \"a\" -> \"b\"\n" +
				"```\n" +
				"\n" +
				"</details>\n",
		},
		{
			name: "what a PR controls -> escaped in HTML, quoted in Markdown, fenced in a block",
			comment: PlanComment{Layers: []LayerReport{
				{Layer: "<img src=x>", Dir: "a`b</summary>", Workspace: "**w**", Result: &PlanResult{HasChanges: true, Add: 1,
					Changed: []string{"terraform_data.a[\"`](https://evil)\"]"}, Text: "  + x = \"```\"\n"}},
				{Layer: "quiet", Dir: "[x](https://evil)", Result: unchanged},
				{Layer: "broken", Err: errors.New("```\n# injected heading\n<b>bold</b>")},
			}},
			want: "**Terraform plan:** 3 layers, 1 with changes, 1 failed\n" +
				"\n" +
				"<details><summary><b>&lt;img src=x&gt;</b> (<code>a`b&lt;/summary&gt;</code>, workspace <code>**w**</code>): Plan: 1 to add, 0 to change, 0 to destroy</summary>\n" +
				"\n" +
				"Changed resources:\n" +
				"- ``terraform_data.a[\"`](https://evil)\"]``\n" +
				"\n" +
				"````diff\n" +
				"+   x = \"```\"\n" +
				"````\n" +
				"\n" +
				"</details>\n" +
				"\n" +
				"✅ **quiet** (`[x](https://evil)`): no changes.\n" +
				"\n" +
				"<details open><summary>❌ <b>broken</b>: failed</summary>\n" +
				"\n" +
				"````\n" +
				"```\n" +
				"# injected heading\n" +
				"<b>bold</b>\n" +
				"````\n" +
				"\n" +
				"</details>\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.comment.Markdown()
			if got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestPlanCommentFitsTheLimitByCuttingPlanTexts(t *testing.T) {
	big := strings.Repeat("  + resource \"terraform_data\" \"é\" {}\n", 5000)
	layers := []LayerReport{
		{Layer: "small", Result: &PlanResult{HasChanges: true, Add: 1, Text: "  + small\n"}},
		{Layer: "big1", Result: &PlanResult{HasChanges: true, Add: 5000, Text: big}, LogURL: "https://x/1"},
		{Layer: "big2", Result: &PlanResult{HasChanges: true, Add: 5000, Text: big}, Next: "Next: `/apply big2`."},
	}
	for _, limit := range []int{markdown.MaxBytes, 4000} {
		c := PlanComment{Layers: layers, End: "The end."}.within(limit)
		if len(c) > limit || !utf8.ValidString(c) {
			t.Errorf("limit %d: comment is %d bytes, valid UTF-8 %v", limit, len(c), utf8.ValidString(c))
		}
		if !strings.Contains(c, "+   small\n") || strings.Count(c, "… plan cut to fit in a comment") != 2 ||
			!strings.Contains(c, "… plan cut to fit in a comment; see the full log") {
			t.Errorf("limit %d: the small plan must stay whole and both big ones be cut:\n%s", limit, c[:min(len(c), 2000)])
		}
		// What comes next is never cut.
		if strings.Count(c, "</details>") != 3 || !strings.Contains(c, "\n</details>\n\nNext: `/apply big2`.\n") || !strings.HasSuffix(c, "\nThe end.\n") {
			t.Errorf("limit %d: a layer lost its end:\n%s", limit, markdown.Tail(c, 2000))
		}
	}
}

// An error message is not given a share of the room: when one is too long,
// the comment is cut inside its fence, and the fence is closed.
func TestPlanCommentCutInsideAnErrorClosesItsFence(t *testing.T) {
	msg := "terraform plan: Error: " + strings.Repeat("ünïcödé detail\n", 8000)
	c := PlanComment{Layers: []LayerReport{
		{Layer: "quiet", Result: &PlanResult{Text: "No changes.\n"}},
		{Layer: "broken", Err: errors.New(msg)},
	}}.Markdown()
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
