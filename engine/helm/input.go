package helm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"helm.sh/helm/v3/pkg/chartutil"
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
	// Root is the fetched tree (absolute): the chart and the values files
	// are read only from within it, never through a symlink out of it.
	Root        string
	ChartDir    string   // absolute path of the chart (a directory or a .tgz) in Root
	ValuesFiles []string // absolute paths in Root, merged in order, later wins
	ReleaseName string
	Namespace   string
	// Timeout bounds the upgrade's wait and the test hooks; DefaultTimeout
	// when zero.
	Timeout time.Duration
	// Filters names the test hooks to run (Helm's Filters["name"]); all when
	// empty.
	Filters     []string
	Remediation Remediation // RemediateNone when empty
	// Labels are set on the revision the install or upgrade writes, so
	// that its history says who installed it (cleanup reads them).
	Labels map[string]string
}

func (in *Input) validate() error {
	if !filepath.IsAbs(in.Root) {
		return fmt.Errorf("repository tree %q is not an absolute path", in.Root)
	}
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
