package terraform

// SensitiveInputs are the values the layer's sensitive root variables may
// take (sensitiveInputs), read before Terraform runs: a log stored while
// Terraform prints it is masked with them, as the check made from
// PlanInput.Planned is. Var files Plan would refuse are left out.
func SensitiveInputs(s Setup, varFiles []string) []string {
	files, err := checkVarFiles(s.WorkDir, s.Root, varFiles)
	if err != nil {
		files = nil
	}
	return sensitiveInputs(s.WorkDir, files, s.Env)
}
