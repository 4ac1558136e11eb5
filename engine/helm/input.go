package helm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
)

// DefaultTimeout applies when Input.Timeout is zero.
const DefaultTimeout = 5 * time.Minute

// Remediation is what to do after a failed upgrade or test.
type Remediation string

const (
	RemediateNone      Remediation = "none"
	RemediateRollback  Remediation = "rollback"
	RemediateUninstall Remediation = "uninstall"
)

// Input says which chart to install as which release, and how to test it.
type Input struct {
	ChartDir    string   // absolute path of the chart in the fetched tree
	ValuesFiles []string // absolute paths, merged in order, later wins
	ReleaseName string
	Namespace   string
	// Timeout bounds the upgrade's wait and the test hooks; DefaultTimeout
	// when zero.
	Timeout time.Duration
	// Filters names the test hooks to run (Helm's Filters["name"]); all when
	// empty.
	Filters     []string
	Remediation Remediation // RemediateNone when empty
}

func (in *Input) validate() error {
	if !filepath.IsAbs(in.ChartDir) {
		return fmt.Errorf("chart dir %q is not an absolute path", in.ChartDir)
	}
	for _, f := range in.ValuesFiles {
		if !filepath.IsAbs(f) {
			return fmt.Errorf("values file %q is not an absolute path", f)
		}
	}
	if err := chartutil.ValidateReleaseName(in.ReleaseName); err != nil {
		return fmt.Errorf("release name %q: %w", in.ReleaseName, err)
	}
	if in.Namespace == "" {
		return fmt.Errorf("release %s: no namespace", in.ReleaseName)
	}
	switch in.Remediation {
	case "":
		in.Remediation = RemediateNone
	case RemediateNone, RemediateRollback, RemediateUninstall:
	default:
		return fmt.Errorf("remediation %q: want none, rollback or uninstall", in.Remediation)
	}
	if in.Timeout <= 0 {
		in.Timeout = DefaultTimeout
	}
	return nil
}

// loadChart loads the chart with its dependencies from its charts/ dir; a
// dependency that Chart.yaml names but charts/ lacks is an error, since
// Strata never downloads dependencies.
func loadChart(dir string) (*chart.Chart, error) {
	ch, err := loader.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("loading chart %s: %w", dir, err)
	}
	if deps := ch.Metadata.Dependencies; len(deps) > 0 {
		if err := action.CheckDependencies(ch, deps); err != nil {
			return nil, fmt.Errorf("chart %s: %w (vendor them into charts/ with `helm dependency build` and commit them)", ch.Name(), err)
		}
	}
	return ch, nil
}

// mergeValues merges the values files the way `helm -f a -f b` does.
func mergeValues(files []string) (map[string]any, error) {
	opts := values.Options{ValueFiles: files}
	// No getters: values files are local paths only, never URLs.
	vals, err := opts.MergeValues(getter.Providers{})
	if err != nil {
		return nil, fmt.Errorf("merging values files: %w", err)
	}
	return vals, nil
}

// valuesDigest is the sha256 of the merged values as canonical JSON
// (encoding/json sorts map keys), so equal values give equal digests
// whatever the files' layout.
func valuesDigest(vals map[string]any) (string, error) {
	b, err := json.Marshal(vals)
	if err != nil {
		return "", fmt.Errorf("digesting values: %w", err)
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}
