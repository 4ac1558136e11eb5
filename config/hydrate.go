package config

import (
	"fmt"
	"path"
	"strings"
	"time"
)

// Hydrate bounds what a kustomize build may reach besides the repository:
//
//	hydrate:
//	  allow_remote: [github.com/acme/*]   # default: none
//	  timeout: 5m                         # default
//	  validate: warn                      # off | warn | block (default warn)
type Hydrate struct {
	// AllowRemote lists the remote resources, bases and components that
	// kustomize may fetch, as host/path patterns (github.com/acme/*); each
	// segment is matched with path.Match and the pattern covers everything
	// under what it matches. Every other remote reference is refused before
	// the build. STRATA_HYDRATE_ALLOW_REMOTE: comma-separated.
	AllowRemote []string `yaml:"allow_remote"`
	// Timeout bounds one kustomize build (default 5m).
	// STRATA_HYDRATE_TIMEOUT.
	Timeout time.Duration `yaml:"timeout"`
	// Validate is how hydrated output is checked against Kubernetes'
	// schemas when a sync says nothing: off, warn (the default) or block
	// (hydrate_validate.go). STRATA_HYDRATE_VALIDATE.
	Validate string `yaml:"validate"`
}

func (h *Hydrate) applyEnv(getenv func(string) (string, bool)) error {
	if v, ok := getenv("STRATA_HYDRATE_ALLOW_REMOTE"); ok {
		h.AllowRemote = nil
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				h.AllowRemote = append(h.AllowRemote, p)
			}
		}
	}
	if v, ok := getenv("STRATA_HYDRATE_TIMEOUT"); ok && v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("STRATA_HYDRATE_TIMEOUT %q is not a duration", v)
		}
		h.Timeout = d
	}
	if v, ok := getenv("STRATA_HYDRATE_VALIDATE"); ok && v != "" {
		h.Validate = v
	}
	return nil
}

func (h *Hydrate) applyDefaults() {
	if h.Timeout == 0 {
		h.Timeout = 5 * time.Minute
	}
	if h.Validate == "" {
		h.Validate = DefaultValidate
	}
}

func (h *Hydrate) problems() []string {
	out := h.validateProblems()
	if h.Timeout < 0 {
		out = append(out, "hydrate.timeout must not be negative")
	}
	for _, p := range h.AllowRemote {
		if strings.Contains(p, "://") || strings.Contains(p, "?") || strings.Trim(p, "/") == "" {
			out = append(out, fmt.Sprintf("hydrate.allow_remote: %q: write a host and path, such as github.com/acme/*", p))
			continue
		}
		if _, err := path.Match(p, ""); err != nil {
			out = append(out, fmt.Sprintf("hydrate.allow_remote: %q: %v", p, err))
		}
	}
	return out
}
