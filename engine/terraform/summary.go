package terraform

import (
	"sort"

	tfjson "github.com/hashicorp/terraform-json"
)

// summarize counts a plan's changes the way Terraform's own
// "Plan: N to add, ..." line does: managed resources only, a replacement
// counting as one add and one destroy.
func summarize(p *tfjson.Plan) *PlanResult {
	r := &PlanResult{}
	for _, rc := range p.ResourceChanges {
		if rc.Mode != tfjson.ManagedResourceMode || rc.Change == nil {
			continue
		}
		a := rc.Change.Actions
		changed := true
		switch {
		case a.Replace():
			r.Add++
			r.Destroy++
			r.Replaced = append(r.Replaced, rc.Address)
		case a.Create():
			r.Add++
		case a.Update():
			r.Change++
		case a.Delete():
			r.Destroy++
			r.Destroyed = append(r.Destroyed, rc.Address)
		default:
			changed = false
		}
		if rc.Change.Importing != nil {
			r.Import++
			changed = true
		}
		if changed {
			r.Changed = append(r.Changed, rc.Address)
		}
	}

	sensitiveOutputs := map[string]bool{}
	if p.Config != nil && p.Config.RootModule != nil {
		for name, o := range p.Config.RootModule.Outputs {
			sensitiveOutputs[name] = o.Sensitive
		}
	}
	for name, c := range p.OutputChanges {
		var action string
		switch {
		case c.Actions.Create():
			action = "add"
		case c.Actions.Update():
			action = "change"
		case c.Actions.Delete():
			action = "destroy"
		default:
			continue
		}
		r.Outputs = append(r.Outputs, OutputChange{Name: name, Action: action, Sensitive: sensitiveOutputs[name]})
	}
	sort.Slice(r.Outputs, func(i, j int) bool { return r.Outputs[i].Name < r.Outputs[j].Name })

	r.Sensitive = sensitiveValues(p)
	return r
}
