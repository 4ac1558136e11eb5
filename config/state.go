package config

import (
	"fmt"
	"net"
	"strconv"
)

// State is the server's managed Terraform state (docs/state.md): where
// Terraform's http backend listens, and how many versions of each state
// are kept.
type State struct {
	// Addr is the backend's listener: loopback by default, since the
	// Terraform runs that use it are on this host and nobody else needs
	// it; "off" keeps no state (layers without a backend lose theirs
	// after each run, as before). STRATA_STATE_ADDR.
	Addr string `yaml:"addr"`
	// Retention is how many versions of each state are kept (default
	// 100). STRATA_STATE_RETENTION.
	Retention int `yaml:"retention"`
}

// DefaultStateAddr is where the state backend listens unless told
// otherwise: loopback, beside the metrics' 9090.
const DefaultStateAddr = "127.0.0.1:9092"

// DefaultStateRetention is how many versions of a state are kept.
const DefaultStateRetention = 100

// Off reports whether the server keeps no state.
func (s *State) Off() bool { return s.Addr == "off" }

func (s *State) applyEnv(getenv func(string) (string, bool)) error {
	if v, ok := getenv("STRATA_STATE_ADDR"); ok {
		s.Addr = v
	}
	if v, ok := getenv("STRATA_STATE_RETENTION"); ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("STRATA_STATE_RETENTION %q is not a number", v)
		}
		s.Retention = n
	}
	return nil
}

func (s *State) applyDefaults() {
	if s.Addr == "" {
		s.Addr = DefaultStateAddr
	}
	if s.Retention == 0 {
		s.Retention = DefaultStateRetention
	}
}

func (s *State) problems() []string {
	var p []string
	if s.Off() {
		return p
	}
	host, _, err := net.SplitHostPort(s.Addr)
	switch {
	case err != nil:
		p = append(p, fmt.Sprintf("state.addr (STRATA_STATE_ADDR) %q: %v; want HOST:PORT on loopback, or off", s.Addr, err))
	case !isLoopback(host):
		p = append(p, fmt.Sprintf("state.addr (STRATA_STATE_ADDR) %q: the state backend listens on loopback only (127.0.0.1, ::1 or localhost): "+
			"the runs that use it are on this host, and a stranger on the network must not reach it", s.Addr))
	}
	if s.Retention < 1 {
		p = append(p, fmt.Sprintf("state.retention (STRATA_STATE_RETENTION) %d: keep at least 1 version", s.Retention))
	}
	return p
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
