package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/redact"
)

// The JSON report of `strata run plan|apply|drift --format json`: one
// document on stdout, the shape docs/cli.md documents. A field is added,
// never renamed or removed, without a new format_version.
type jsonReport struct {
	FormatVersion int         `json:"format_version"`
	Command       string      `json:"command"` // plan, apply or drift
	Layers        []jsonLayer `json:"layers"`
}

// jsonLayer is one layer of the run. Status is, for plan: changes,
// no_changes, failed; for drift: clean, drifted, failed; for apply:
// applied, no_changes, plan_failed, refused, not_confirmed, skipped,
// apply_failed. Reason says why a layer failed or was not applied.
type jsonLayer struct {
	Layer         string    `json:"layer"`
	Dir           string    `json:"dir"`
	Workspace     string    `json:"workspace"`
	Engine        string    `json:"engine"`
	EngineVersion string    `json:"engine_version,omitempty"`
	Status        string    `json:"status"`
	Reason        string    `json:"reason,omitempty"`
	Plan          *jsonPlan `json:"plan,omitempty"` // absent when the plan failed
}

type jsonPlan struct {
	Summary    string       `json:"summary"` // as Terraform's "Plan:" line says it
	HasChanges bool         `json:"has_changes"`
	Add        int          `json:"add"`
	Change     int          `json:"change"`
	Destroy    int          `json:"destroy"`
	Import     int          `json:"import"`
	Replaced   []string     `json:"replaced"`  // addresses, never values
	Destroyed  []string     `json:"destroyed"` // destroyed without replacement
	Changed    []string     `json:"changed"`   // every address with a change
	Outputs    []jsonOutput `json:"outputs"`
	Text       string       `json:"text"` // the plan as Terraform printed it
}

type jsonOutput struct {
	Name   string `json:"name"`
	Action string `json:"action"` // add, change or destroy
}

func layerJSON(run localRun, rep terraform.LayerReport) jsonLayer {
	ws := run.layer.Workspace
	if ws == "" {
		ws = "default"
	}
	l := jsonLayer{Layer: run.layer.Name, Dir: run.layer.Dir, Workspace: ws, Engine: string(run.kind)}
	r := rep.Result
	if r == nil || rep.Err != nil {
		return l
	}
	l.EngineVersion = r.TerraformVersion
	l.Plan = &jsonPlan{Summary: r.Summary(), HasChanges: r.HasChanges, Add: r.Add, Change: r.Change, Destroy: r.Destroy, Import: r.Import,
		Replaced: nonNil(r.Replaced), Destroyed: nonNil(r.Destroyed), Changed: nonNil(r.Changed), Outputs: []jsonOutput{}, Text: r.Text}
	for _, o := range r.Outputs {
		l.Plan.Outputs = append(l.Plan.Outputs, jsonOutput{Name: o.Name, Action: o.Action})
	}
	return l
}

// nonNil keeps an empty list a list ([]), not null, for programs that
// iterate it.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// writeJSON encodes the report with every string masked before it is
// escaped (redact.JSON), indented for a person who looks at it.
func writeJSON(w io.Writer, command string, layers []jsonLayer, red *redact.Redactor) {
	if layers == nil {
		layers = []jsonLayer{}
	}
	raw, err := redact.JSON(jsonReport{FormatVersion: 1, Command: command, Layers: layers}, red.String)
	if err != nil {
		// Strings, numbers and lists of them: this cannot fail.
		panic(fmt.Sprintf("encode report: %v", err))
	}
	var b bytes.Buffer
	_ = json.Indent(&b, raw, "", "  ")
	b.WriteByte('\n')
	w.Write(b.Bytes())
}
