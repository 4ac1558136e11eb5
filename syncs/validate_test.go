package syncs

import (
	"strings"
	"testing"

	"strata.dev/strata/engine/hydrate"
)

func TestValidationOutcome(t *testing.T) {
	invalid := &hydrate.Validation{Kubernetes: "v1.37.2", Checked: 2, Invalid: []hydrate.Invalid{{File: "deployment_api.yaml", Kind: "Deployment", Name: "api",
		Problems: []string{"/spec/replicas: got string, want integer"}}}, Unvalidated: []hydrate.Unvalidated{{APIVersion: "example.com/v1", Kind: "Widget", Name: "w"}}}
	valid := &hydrate.Validation{Kubernetes: "v1.37.2", Checked: 3}
	for _, tc := range []struct {
		name       string
		mode       string
		v          *hydrate.Validation
		block      bool
		conclusion string
		title      string
		text       []string
	}{
		{name: "off", mode: "off", v: nil, conclusion: "success"},
		{name: "warn, all valid", mode: "warn", v: valid, conclusion: "success",
			text: []string{"**Validation:** 3 objects valid against Kubernetes v1.37.2's schemas."}},
		{name: "warn, one invalid: neutral, hydrated", mode: "warn", v: invalid, conclusion: "neutral", title: "1 invalid object",
			text: []string{"1 object of 3 invalid", "(`hydrate.validate: warn`: reported, not blocking)", "- `deployment_api.yaml`: `Deployment` `api`\n  - `/spec/replicas: got string, want integer`",
				"Not validated (kinds these schemas do not know, such as custom resources): `example.com/v1 Widget` (1)."}},
		{name: "block, one invalid: failure, nothing committed", mode: "block", v: invalid, block: true, conclusion: "failure", title: "1 invalid object",
			text: []string{"**Validation failed:** 1 object of 3 invalid", "so nothing was committed"}},
		{name: "block, all valid", mode: "block", v: valid, conclusion: "success", text: []string{"3 objects valid"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := validationOutcome(tc.mode, tc.v)
			if got.Block != tc.block || got.Conclusion != tc.conclusion || got.Title != tc.title {
				t.Errorf("got block %v, %q, %q; want %v, %q, %q", got.Block, got.Conclusion, got.Title, tc.block, tc.conclusion, tc.title)
			}
			for _, want := range tc.text {
				if !strings.Contains(got.Text, want) {
					t.Errorf("text\n%s\nlacks %q", got.Text, want)
				}
			}
			if len(tc.text) == 0 && got.Text != "" {
				t.Errorf("text %q, want none", got.Text)
			}
		})
	}
}

// TestValidationFinishing: the validation turns a success into its own
// conclusion and follows the summary; a failure stays a failure.
func TestValidationFinishing(t *testing.T) {
	v := validated{Conclusion: "neutral", Title: "1 invalid object", Text: "**Validation:** ..."}
	var got [3]string
	f := v.finishing(func(c, t, s string) error { got = [3]string{c, t, s}; return nil })
	_ = f("success", "3 resources", "Hydrated.\n")
	if want := [3]string{"neutral", "3 resources; 1 invalid object", "Hydrated.\n\n**Validation:** ..."}; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	_ = f("failure", "Hydration failed", "x")
	if got[0] != "failure" || got[1] != "Hydration failed" {
		t.Errorf("a failure became %q %q", got[0], got[1])
	}
}
