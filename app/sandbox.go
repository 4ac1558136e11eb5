package app

// logSandbox says at start-up how Terraform runs on this replica. One that
// cannot sandbox it warns that its plans are refused, and what to do.
func (s *Server) logSandbox() {
	switch err := s.sandbox.Err(); {
	case err != nil:
		s.log.Warn().Str("sandbox", s.sandbox.String()).Msg(err.Error() + ". Until then every plan and apply is refused.")
	case s.sandbox.Off:
		s.log.Warn().Str("sandbox", s.sandbox.String()).Msg("Terraform runs unconfined: a pull request's code can read every file this server can")
	default:
		s.log.Info().Str("sandbox", s.sandbox.String()).Msg("Terraform runs sandboxed")
	}
}
