package terraform

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"sort"

	tfjson "github.com/hashicorp/terraform-json"
)

// readPlanJSON reads a saved plan as `show -json` prints it, as it streams:
// one resource change, output or state resource at a time, never the whole
// document. A plan whose values weigh hundreds of megabytes (the JSON
// holds each value twice or more) costs the largest resource's size here.
// It counts the changes the way Terraform's own "Plan: N to add, ..." line
// does (managed resources only, a replacement counting as one add and one
// destroy) and collects the values the plan marks sensitive.
func readPlanJSON(r io.Reader) (*PlanResult, error) {
	p := &planJSON{dec: json.NewDecoder(r), sensitive: map[string]bool{}, r: &PlanResult{}}
	p.dec.UseNumber()
	err := p.object(func(key string) error {
		switch key {
		case "resource_changes", "resource_drift":
			return p.array(func() error {
				var rc resourceChange
				if err := p.dec.Decode(&rc); err != nil {
					return err
				}
				if key == "resource_changes" {
					p.r.addChange(&rc)
					p.r.addPlannedChange(&rc)
				}
				if rc.Change != nil {
					p.change(rc.Change)
				}
				return nil
			})
		case "output_changes":
			return p.object(func(name string) error {
				var c change
				if err := p.dec.Decode(&c); err != nil {
					return err
				}
				if action := outputAction(c.Actions); action != "" {
					p.r.Outputs = append(p.r.Outputs, OutputChange{Name: name, Action: action})
				}
				p.change(&c)
				return nil
			})
		case "prior_state":
			return p.object(func(key string) error {
				if key == "values" {
					return p.stateValues()
				}
				return p.skip()
			})
		case "planned_values":
			return p.stateValues()
		case "configuration":
			return p.dec.Decode(&p.config)
		case "variables":
			return p.dec.Decode(&p.variables)
		}
		return p.skip()
	})
	if err != nil {
		return nil, fmt.Errorf("read the plan's JSON: %w", err)
	}
	return p.result(), nil
}

// planJSON is the state of readPlanJSON.
type planJSON struct {
	dec       *json.Decoder
	r         *PlanResult
	sensitive map[string]bool
	// The configuration says which outputs and variables are sensitive;
	// it comes after them.
	config    *tfjson.Config
	variables map[string]*tfjson.PlanVariable
}

func (p *planJSON) add(s string) {
	if s != "" {
		p.sensitive[s] = true
	}
}

func (p *planJSON) result() *PlanResult {
	r := p.r
	var root *tfjson.ConfigModule
	if p.config != nil {
		root = p.config.RootModule
	}
	if root != nil {
		for i, o := range r.Outputs {
			if c := root.Outputs[o.Name]; c != nil {
				r.Outputs[i].Sensitive = c.Sensitive
			}
		}
		for name, v := range root.Variables {
			if pv := p.variables[name]; v.Sensitive && pv != nil {
				walkMarked(pv.Value, true, p.add)
			}
		}
	}
	sort.Slice(r.Outputs, func(i, j int) bool { return r.Outputs[i].Name < r.Outputs[j].Name })
	r.Sensitive = longestFirst(p.sensitive)
	return r
}

// resourceChange and change are tfjson's ResourceChange and Change with
// the values left raw: a value is decoded only when its marks say some of
// it is sensitive, so a plan of large values is not decoded whole.
type resourceChange struct {
	Address string              `json:"address"`
	Mode    tfjson.ResourceMode `json:"mode"`
	Change  *change             `json:"change"`
}

type change struct {
	Actions         tfjson.Actions    `json:"actions"`
	Before          json.RawMessage   `json:"before"`
	After           json.RawMessage   `json:"after"`
	BeforeSensitive any               `json:"before_sensitive"`
	AfterSensitive  any               `json:"after_sensitive"`
	AfterUnknown    json.RawMessage   `json:"after_unknown"`
	Importing       *tfjson.Importing `json:"importing"`
}

func (p *planJSON) change(c *change) {
	p.marked(c.Before, c.BeforeSensitive)
	p.marked(c.After, c.AfterSensitive)
}

// marked collects the strings of a raw value that marks cover.
func (p *planJSON) marked(raw json.RawMessage, marks any) {
	if !anyMarked(marks) {
		return
	}
	var value any
	if json.Unmarshal(raw, &value) == nil {
		walkMarked(value, marks, p.add)
	}
}

// anyMarked says whether marks cover anything.
func anyMarked(marks any) bool {
	switch m := marks.(type) {
	case bool:
		return m
	case map[string]any:
		for _, sub := range m {
			if anyMarked(sub) {
				return true
			}
		}
	case []any:
		for _, sub := range m {
			if anyMarked(sub) {
				return true
			}
		}
	}
	return false
}

// addChange counts one resource change.
func (r *PlanResult) addChange(rc *resourceChange) {
	if rc.Mode != tfjson.ManagedResourceMode || rc.Change == nil {
		return
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

// outputAction is what a root output's change does, in OutputChange's
// words; "" when it does not change.
func outputAction(a tfjson.Actions) string {
	switch {
	case a.Create():
		return "add"
	case a.Update():
		return "change"
	case a.Delete():
		return "destroy"
	}
	return ""
}

// stateValues reads planned_values or prior_state's values: the sensitive
// outputs and the resources' values their sensitive_values mark.
func (p *planJSON) stateValues() error {
	return p.object(func(key string) error {
		switch key {
		case "outputs":
			return p.object(func(string) error {
				var o struct {
					Sensitive bool            `json:"sensitive"`
					Value     json.RawMessage `json:"value"`
				}
				if err := p.dec.Decode(&o); err != nil {
					return err
				}
				p.marked(o.Value, o.Sensitive)
				return nil
			})
		case "root_module":
			return p.module()
		}
		return p.skip()
	})
}

func (p *planJSON) module() error {
	return p.object(func(key string) error {
		switch key {
		case "resources":
			return p.array(func() error {
				var r struct {
					Values          json.RawMessage `json:"values"`
					SensitiveValues any             `json:"sensitive_values"`
				}
				if err := p.dec.Decode(&r); err != nil {
					return err
				}
				p.marked(r.Values, r.SensitiveValues)
				return nil
			})
		case "child_modules":
			return p.array(p.module)
		}
		return p.skip()
	})
}

// object reads an object, calling member with each key, which must read
// the key's value; null is an empty object.
func (p *planJSON) object(member func(key string) error) error {
	return p.container('{', func() error {
		t, err := p.dec.Token()
		if err != nil {
			return err
		}
		key, ok := t.(string)
		if !ok {
			return fmt.Errorf("object key %v", t)
		}
		return member(key)
	})
}

// array reads an array, calling elem to read each element; null is an
// empty array.
func (p *planJSON) array(elem func() error) error { return p.container('[', elem) }

func (p *planJSON) container(open json.Delim, each func() error) error {
	t, err := p.dec.Token()
	if err != nil {
		return err
	}
	if t == nil {
		return nil
	}
	if t != open {
		return fmt.Errorf("want %v, found %v", open, t)
	}
	for p.dec.More() {
		if err := each(); err != nil {
			return err
		}
	}
	_, err = p.dec.Token() // the closing delimiter
	return err
}

// skip reads a value of no interest, a token at a time: the decoder never
// holds more of it than its largest string or number.
func (p *planJSON) skip() error {
	depth := 0
	for {
		t, err := p.dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// showJSON reads the saved plan as JSON (readPlanJSON), streamed from
// `show -json`: terraform-exec would hold the whole document, then decode
// it whole. It does not go to the log: it holds sensitive values, and the
// plan's text is there already. The command runs as terraform-exec runs
// the others: the same program (the sandbox's launcher, if any) and
// environment, interrupted when ctx ends, killed a wait delay later.
func (s *session) showJSON(ctx context.Context, planPath string) (*PlanResult, error) {
	var r *PlanResult
	err := s.step("show -json", func() error {
		cmd := exec.CommandContext(ctx, s.tf.ExecPath(), "show", "-json", "-no-color", planPath)
		cmd.Dir = s.tf.WorkingDir()
		cmd.Env = commandEnv(s.launch.env)
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		cmd.WaitDelay = s.setup.waitDelay()
		cmd.Stderr = io.MultiWriter(s.log, &s.stderr)
		out, err := cmd.StdoutPipe()
		if err != nil {
			return err
		}
		if err := cmd.Start(); err != nil {
			return err
		}
		var src io.Reader = out
		if s.keepJSON != nil {
			src = io.TeeReader(out, s.keepJSON)
		}
		r, err = readPlanJSON(src)
		io.Copy(io.Discard, src) // what a failed read left: Terraform ends
		if werr := cmd.Wait(); werr != nil {
			return werr
		}
		return err
	})
	return r, err
}

// commandEnv is a command's environment as terraform-exec makes it from
// the session's: in automation, without logging or a workspace override.
func commandEnv(env map[string]string) []string {
	e := maps.Clone(env)
	if _, ok := e["CHECKPOINT_DISABLE"]; !ok {
		e["CHECKPOINT_DISABLE"] = os.Getenv("CHECKPOINT_DISABLE")
	}
	for _, k := range []string{"TF_LOG", "TF_LOG_CORE", "TF_LOG_PATH", "TF_LOG_PROVIDER"} {
		e[k] = ""
	}
	e["TF_IN_AUTOMATION"] = "1"
	delete(e, "TF_WORKSPACE")
	out := make([]string, 0, len(e))
	for k, v := range e {
		out = append(out, k+"="+v)
	}
	return out
}
