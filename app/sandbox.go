package app

import "strings"

// logSandbox says at start-up how Terraform runs on this replica, with the
// table of what keeps each protection. One that lacks a protection warns:
// with `terraform.sandbox: on` its plans are refused, and what to do; with
// best_effort or off, what its runs do without.
func (s *Server) logSandbox() {
	table := strings.TrimRight(s.sandbox.Table(), "\n")
	switch err := s.sandbox.Err(); {
	case err != nil:
		s.log.Warn().Str("sandbox", s.sandbox.String()).Str("protections", table).Msg(err.Error() + ". Until then every plan and apply is refused.")
	case len(s.sandbox.Missing()) > 0:
		s.log.Warn().Str("sandbox", s.sandbox.String()).Str("protections", table).
			Msg("Terraform runs without some of the sandbox's protections (terraform.sandbox: " + string(s.sandbox.Mode) + "): a pull request's code can do what the missing ones prevent; every run's log says so")
	default:
		s.log.Info().Str("sandbox", s.sandbox.String()).Str("protections", table).Msg("Terraform runs sandboxed")
	}
}
