package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Server is the server's configuration: a YAML file (`--config`) overridden
// by STRATA_* environment variables.
type Server struct {
	Addr        string `yaml:"addr"`
	DatabaseURL string `yaml:"database_url"`
	DataDir     string `yaml:"data_dir"`
	PublicURL   string `yaml:"public_url"`
	// MetricsAddr is the listener of /metrics, apart from the public one:
	// its labels name repositories and layers. Loopback by default; "off"
	// serves no metrics.
	MetricsAddr string `yaml:"metrics_addr"`
	GitHub      GitHub `yaml:"github"`
	// TerraformBin is the terraform binary; empty means `terraform` on PATH.
	TerraformBin string `yaml:"terraform_bin"`
	// Terraform is what Terraform may see of the server: its environment
	// and, in the sandbox, its files (config/terraform.go).
	Terraform Terraform `yaml:"terraform"`
	// Workers is how many runs execute at once on this replica.
	Workers int `yaml:"workers"`
	// ApplyPermission is the least repository permission that may /apply,
	// /takeover, /release and /helm-test: write (default), maintain or admin.
	ApplyPermission string `yaml:"apply_permission"`
	// PlanPermission is the least repository permission that may /plan
	// (run a PR's code) and /unlock: write (default), maintain or admin;
	// triage or read open planning to more people, on private repos.
	PlanPermission string `yaml:"plan_permission"`
	// DefaultApplyRequirements are the apply requirements of a layer that
	// only a PR defines: it gets these, never its own. Default approved and
	// mergeable.
	DefaultApplyRequirements []ApplyRequirement `yaml:"default_apply_requirements"`
	// Redact lists regular expressions whose matches never reach GitHub or
	// the store, besides tokens and values Terraform marks sensitive.
	Redact []string `yaml:"redact"`
	// Policies are policy sets on the server's disk that judge every
	// repository's plans, besides those of its .strata.yaml
	// (config/repo_policies.go).
	Policies []PolicySet `yaml:"policies"`
	Clusters []Cluster   `yaml:"clusters"`
	// ShutdownTimeout is how long running jobs may finish after SIGTERM.
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
	// Source limits for the tree of a commit; a larger repository is
	// refused with an error naming the variable (0: the fetcher's default,
	// 1 GiB in all, 100 MiB a file, 100,000 entries).
	SourceMaxBytes     int64 `yaml:"source_max_bytes"`
	SourceMaxFileBytes int64 `yaml:"source_max_file_bytes"`
	SourceMaxFiles     int64 `yaml:"source_max_files"`
	// RunLogLimit is how many bytes one run's log may hold (default 64
	// MiB): past it the log says it was cut, and the run goes on.
	RunLogLimit int64 `yaml:"run_log_limit"`
	// RepinInterval is how often the images that syncs pin to digests are
	// resolved again, to rehydrate the syncs whose tags moved (default 5m).
	RepinInterval time.Duration `yaml:"repin_interval"`
	// Hydrate: what kustomize builds may fetch, and how long they may take
	// (config/hydrate.go).
	Hydrate Hydrate `yaml:"hydrate"`
	// State is the managed Terraform state's backend (config/state.go).
	State State `yaml:"state"`
	// Storage: plan encryption keys, retention, source cache bound
	// (config/storage.go).
	Storage `yaml:",inline"`
	// Log: level and format of the server's log (config/log.go).
	Log Log `yaml:"log"`
}

// GitHub holds the App's identity and where GitHub is.
type GitHub struct {
	AppID          int64  `yaml:"app_id"`
	PrivateKey     string `yaml:"private_key"`
	PrivateKeyFile string `yaml:"private_key_file"`
	WebhookSecret  string `yaml:"webhook_secret"`
	APIURL         string `yaml:"api_url"`
	GraphQLURL     string `yaml:"graphql_url"`
	WebURL         string `yaml:"web_url"`
	// ClientID and ClientSecret are the App's OAuth credentials, for the
	// web UI's GitHub login; the setup flow stores them, a config sets them
	// for an App registered by hand. Without them the UI shows how to set them.
	ClientID     string `yaml:"client_id"`
	ClientSecret string `yaml:"client_secret"`
	// MaxWait is how long one GitHub request waits out a rate limit before
	// it fails (default 15m).
	MaxWait time.Duration `yaml:"max_wait"`
}

// Cluster is a Kubernetes cluster that releases may name. Only the server
// config defines clusters, so a PR cannot point Strata at another one.
type Cluster struct {
	Name       string `yaml:"name"`
	Kubeconfig string `yaml:"kubeconfig"`
	Context    string `yaml:"context"`
}

// Credentials is what the App manifest flow yields, kept in the data dir.
type Credentials struct {
	AppID         int64  `json:"app_id"`
	Slug          string `json:"slug"`
	HTMLURL       string `json:"html_url"`
	PrivateKey    string `json:"private_key"`
	WebhookSecret string `json:"webhook_secret"`
	ClientID      string `json:"client_id"`
	ClientSecret  string `json:"client_secret"`
	// PublicURL is where the operator told GitHub to reach this server
	// during setup: the server's public URL unless one is configured.
	PublicURL string `json:"public_url,omitempty"`
}

// CredentialsFile is the name of the stored App credentials in the data dir.
const CredentialsFile = "github-app.json"

// LoadServer reads the config file (path may be empty) and the environment,
// applies defaults and validates. getenv is os.LookupEnv outside tests.
func LoadServer(path string, getenv func(string) (string, bool)) (*Server, error) {
	var s Server
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read config: %w", err)
		}
		if err := decodeKnown(path, data, &s); err != nil {
			return nil, err
		}
	}
	return LoadServerFrom(&s, getenv)
}

// LoadServerFrom completes a config built in code (tests, embedding) the way
// LoadServer completes a file: environment, defaults, validation.
func LoadServerFrom(s *Server, getenv func(string) (string, bool)) (*Server, error) {
	if err := s.applyEnv(getenv); err != nil {
		return nil, err
	}
	s.applyDefaults()
	if err := s.loadKey(); err != nil {
		return nil, err
	}
	return s, s.validate()
}

func (s *Server) applyEnv(getenv func(string) (string, bool)) error {
	str := func(key string, dst *string) {
		if v, ok := getenv(key); ok {
			*dst = v
		}
	}
	str("STRATA_ADDR", &s.Addr)
	str("STRATA_DATABASE_URL", &s.DatabaseURL)
	str("STRATA_DATA_DIR", &s.DataDir)
	str("STRATA_PUBLIC_URL", &s.PublicURL)
	str("STRATA_METRICS_ADDR", &s.MetricsAddr)
	str("STRATA_GITHUB_PRIVATE_KEY", &s.GitHub.PrivateKey)
	str("STRATA_GITHUB_PRIVATE_KEY_FILE", &s.GitHub.PrivateKeyFile)
	str("STRATA_GITHUB_WEBHOOK_SECRET", &s.GitHub.WebhookSecret)
	str("STRATA_GITHUB_API_URL", &s.GitHub.APIURL)
	str("STRATA_GITHUB_GRAPHQL_URL", &s.GitHub.GraphQLURL)
	str("STRATA_GITHUB_WEB_URL", &s.GitHub.WebURL)
	str("STRATA_GITHUB_CLIENT_ID", &s.GitHub.ClientID)
	str("STRATA_GITHUB_CLIENT_SECRET", &s.GitHub.ClientSecret)
	str("STRATA_TERRAFORM_BIN", &s.TerraformBin)
	s.Terraform.applyEnv(getenv)
	s.Log.applyEnv(getenv)
	if v, ok := getenv("STRATA_GITHUB_APP_ID"); ok && v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("STRATA_GITHUB_APP_ID %q is not a number", v)
		}
		s.GitHub.AppID = id
	}
	for key, dst := range map[string]*time.Duration{
		"STRATA_REPIN_INTERVAL":  &s.RepinInterval,
		"STRATA_GITHUB_MAX_WAIT": &s.GitHub.MaxWait,
	} {
		if v, ok := getenv(key); ok && v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("%s %q is not a duration", key, v)
			}
			*dst = d
		}
	}
	for key, dst := range map[string]*int64{
		"STRATA_SOURCE_MAX_BYTES":      &s.SourceMaxBytes,
		"STRATA_SOURCE_MAX_FILE_BYTES": &s.SourceMaxFileBytes,
		"STRATA_SOURCE_MAX_FILES":      &s.SourceMaxFiles,
		"STRATA_RUN_LOG_LIMIT":         &s.RunLogLimit,
	} {
		if v, ok := getenv(key); ok && v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return fmt.Errorf("%s %q is not a positive number", key, v)
			}
			*dst = n
		}
	}
	if err := s.Storage.applyEnv(getenv); err != nil {
		return err
	}
	if err := s.Hydrate.applyEnv(getenv); err != nil {
		return err
	}
	if err := s.State.applyEnv(getenv); err != nil {
		return err
	}
	if v, ok := getenv("STRATA_WORKERS"); ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("STRATA_WORKERS %q is not a number", v)
		}
		s.Workers = n
	}
	return nil
}

func (s *Server) applyDefaults() {
	if s.Addr == "" {
		s.Addr = ":8080"
	}
	if s.MetricsAddr == "" {
		s.MetricsAddr = DefaultMetricsAddr
	}
	if s.DataDir == "" {
		s.DataDir = "./.strata"
	}
	if s.DatabaseURL == "" {
		s.DatabaseURL = "sqlite://strata.db"
	}
	if s.GitHub.APIURL == "" {
		s.GitHub.APIURL = "https://api.github.com/"
	}
	if !strings.HasSuffix(s.GitHub.APIURL, "/") {
		s.GitHub.APIURL += "/"
	}
	if s.GitHub.GraphQLURL == "" {
		s.GitHub.GraphQLURL = graphQLURL(s.GitHub.APIURL)
	}
	if s.GitHub.WebURL == "" {
		s.GitHub.WebURL = "https://github.com/"
	}
	if !strings.HasSuffix(s.GitHub.WebURL, "/") {
		s.GitHub.WebURL += "/"
	}
	if s.GitHub.MaxWait == 0 {
		s.GitHub.MaxWait = 15 * time.Minute
	}
	if s.Workers == 0 {
		s.Workers = 4
	}
	if s.RunLogLimit == 0 {
		s.RunLogLimit = 64 << 20
	}
	if s.ApplyPermission == "" {
		s.ApplyPermission = "write"
	}
	if s.PlanPermission == "" {
		s.PlanPermission = "write"
	}
	if s.DefaultApplyRequirements == nil {
		s.DefaultApplyRequirements = []ApplyRequirement{Approved, Mergeable}
	}
	if s.ShutdownTimeout == 0 {
		s.ShutdownTimeout = 5 * time.Minute
	}
	if s.RepinInterval == 0 {
		s.RepinInterval = 5 * time.Minute
	}
	s.Storage.applyDefaults()
	s.Hydrate.applyDefaults()
	s.State.applyDefaults()
	s.Terraform.applyDefaults()
	s.Log.applyDefaults()
	s.PublicURL = strings.TrimSuffix(s.PublicURL, "/")
}

// graphQLURL derives the GraphQL endpoint: api.github.com/graphql on
// github.com, HOST/api/graphql on GitHub Enterprise (REST at HOST/api/v3/).
func graphQLURL(api string) string {
	if strings.HasSuffix(api, "/api/v3/") {
		return strings.TrimSuffix(api, "v3/") + "graphql"
	}
	return api + "graphql"
}

func (s *Server) loadKey() error {
	if s.GitHub.PrivateKey != "" || s.GitHub.PrivateKeyFile == "" {
		return nil
	}
	key, err := os.ReadFile(s.GitHub.PrivateKeyFile)
	if err != nil {
		return fmt.Errorf("STRATA_GITHUB_PRIVATE_KEY_FILE: %w", err)
	}
	s.GitHub.PrivateKey = string(key)
	return nil
}

func (s *Server) validate() error {
	var problems []string
	if s.Workers < 1 {
		problems = append(problems, "STRATA_WORKERS must be at least 1")
	}
	if _, _, err := net.SplitHostPort(s.MetricsAddr); err != nil && !s.MetricsOff() {
		problems = append(problems, fmt.Sprintf("STRATA_METRICS_ADDR %q: %v; want HOST:PORT, or off", s.MetricsAddr, err))
	}
	if s.GitHub.MaxWait < 0 {
		problems = append(problems, "STRATA_GITHUB_MAX_WAIT must not be negative")
	}
	if (s.GitHub.ClientID == "") != (s.GitHub.ClientSecret == "") {
		problems = append(problems, "STRATA_GITHUB_CLIENT_ID and STRATA_GITHUB_CLIENT_SECRET go together (the App's OAuth client, "+
			"for the web UI's login): set both, from the App's settings page, or neither")
	}
	switch s.ApplyPermission {
	case "write", "maintain", "admin":
	default:
		problems = append(problems, fmt.Sprintf("apply_permission %q: want write, maintain or admin", s.ApplyPermission))
	}
	for _, r := range s.DefaultApplyRequirements {
		if !r.Valid() {
			problems = append(problems, fmt.Sprintf("default_apply_requirements: %q is none of approved, mergeable, undiverged, codeowners", r))
		}
	}
	switch s.PlanPermission {
	case "read", "triage", "write", "maintain", "admin":
	default:
		problems = append(problems, fmt.Sprintf("plan_permission %q: want read, triage, write, maintain or admin", s.PlanPermission))
	}
	seen := map[string]bool{}
	for _, c := range s.Clusters {
		if c.Name == "" || c.Kubeconfig == "" {
			problems = append(problems, "every cluster needs a name and a kubeconfig")
		}
		if seen[c.Name] {
			problems = append(problems, fmt.Sprintf("cluster %q is defined twice", c.Name))
		}
		seen[c.Name] = true
	}
	if s.Configured() && s.GitHub.WebhookSecret == "" {
		problems = append(problems, "STRATA_GITHUB_WEBHOOK_SECRET is required: set it to the App's webhook secret")
	}
	if s.GitHub.AppID != 0 && s.GitHub.PrivateKey == "" {
		problems = append(problems, "STRATA_GITHUB_APP_ID is set but no private key: set STRATA_GITHUB_PRIVATE_KEY or STRATA_GITHUB_PRIVATE_KEY_FILE")
	}
	problems = append(problems, s.startProblems()...)
	problems = append(problems, s.Storage.problems()...)
	problems = append(problems, s.Hydrate.problems()...)
	problems = append(problems, s.State.problems()...)
	problems = append(problems, s.Terraform.problems()...)
	problems = append(problems, s.Log.problems()...)
	if len(problems) > 0 {
		return errors.New("invalid server config:\n  " + strings.Join(problems, "\n  "))
	}
	return nil
}

// DefaultMetricsAddr is where /metrics listens unless told otherwise: on
// loopback, so that only this host (or this pod) reads it.
const DefaultMetricsAddr = "127.0.0.1:9090"

// MetricsOff reports whether the server serves no metrics.
func (s *Server) MetricsOff() bool { return s.MetricsAddr == "off" }

// Configured reports whether the App's identity is known. Without it the
// server starts in setup mode.
func (s *Server) Configured() bool { return s.GitHub.AppID != 0 }

// Cluster returns the named cluster; an empty name is the only cluster.
func (s *Server) Cluster(name string) (Cluster, bool) {
	for _, c := range s.Clusters {
		if c.Name == name || (name == "" && len(s.Clusters) == 1) {
			return c, true
		}
	}
	return Cluster{}, false
}

// UseCredentials fills the App identity from stored credentials where the
// file and environment left it empty.
func (s *Server) UseCredentials(c *Credentials) {
	if s.GitHub.AppID != 0 {
		return
	}
	if s.GitHub.ClientID == "" {
		s.GitHub.ClientID, s.GitHub.ClientSecret = c.ClientID, c.ClientSecret
	}
	if s.PublicURL == "" {
		s.PublicURL = c.PublicURL
	}
	s.GitHub.AppID = c.AppID
	s.GitHub.PrivateKey = c.PrivateKey
	if s.GitHub.WebhookSecret == "" {
		s.GitHub.WebhookSecret = c.WebhookSecret
	}
}

// LoadCredentials reads credentials stored by the setup flow, nil when none.
func LoadCredentials(dataDir string) (*Credentials, error) {
	data, err := os.ReadFile(filepath.Join(dataDir, CredentialsFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var c Credentials
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", CredentialsFile, err)
	}
	return &c, nil
}

// SaveCredentials writes credentials readable by the owner only, atomically.
func SaveCredentials(dataDir string, c *Credentials) error {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dataDir, ".github-app-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dataDir, CredentialsFile))
}
