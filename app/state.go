package app

import (
	"fmt"
	"net"

	"strata.dev/strata/store"
	"strata.dev/strata/tfstate"
)

// state is the managed Terraform state's backend (docs/state.md), on a
// listener of its own that config keeps on loopback: the Terraform runs
// that use it are on this host, so its traffic never leaves it, it works
// where the server cannot reach its own public URL (tunnels, hairpin NAT),
// and a stranger on the network cannot reach it at all.

// listenState opens the state backend's listener, unless state is off. It
// listens in New, so that an address in use stops the server at start.
func (s *Server) listenState() error {
	if s.cfg.State.Off() {
		return nil
	}
	ln, err := net.Listen("tcp", s.cfg.State.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s (state.addr, STRATA_STATE_ADDR; off keeps no state): %w", s.cfg.State.Addr, err)
	}
	h := tfstate.Handler(s.store, tfstate.Options{Retention: s.cfg.State.Retention,
		Refused: func(op string, key store.StateKey, status int, why string) {
			s.log.Warn().Str("op", op).Str("repo", key.Repo).Str("layer", key.Layer).Str("workspace", key.Workspace).
				Int("status", status).Str("why", why).Msg("state backend refused a request")
		}})
	s.stateLn, s.stateHTTP = ln, newHTTPServer(h)
	return nil
}

// serveState serves the backend until shutdown; its end is reported on
// errc, as the public listener's is.
func (s *Server) serveState(errc chan<- error) {
	if s.stateHTTP != nil {
		go func() { errc <- s.stateHTTP.Serve(s.stateLn) }()
	}
}

// StateURL is the base URL of the state backend, "" when state is off.
func (s *Server) StateURL() string {
	if s.stateLn == nil {
		return ""
	}
	return "http://" + s.stateLn.Addr().String()
}
