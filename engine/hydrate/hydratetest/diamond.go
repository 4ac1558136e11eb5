package hydratetest

import "fmt"

// Diamond returns a repository whose kustomization deploy/diamond includes
// two bases, each of which includes the same two bases of the level below,
// levels deep, down to one ConfigMap: 2^levels resources from 2*levels+2
// small files, and 2^(levels+1) kustomizations built. A PR's way to pin
// the CPU of a server that runs kustomize.
func Diamond(levels int) map[string]string {
	files := map[string]string{
		"deploy/l0/kustomization.yaml": "resources: [cm.yaml]\n",
		"deploy/l0/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {k: v}\n",
	}
	below := func(level int) string {
		if level == 0 {
			return "[../l0]"
		}
		return fmt.Sprintf("[../l%da, ../l%db]", level, level)
	}
	for level := 1; level <= levels; level++ {
		for _, side := range []string{"a", "b"} {
			files[fmt.Sprintf("deploy/l%d%s/kustomization.yaml", level, side)] =
				fmt.Sprintf("namePrefix: %s-\nresources: %s\n", side, below(level-1))
		}
	}
	files["deploy/diamond/kustomization.yaml"] = fmt.Sprintf("resources: %s\n", below(levels))
	return files
}
