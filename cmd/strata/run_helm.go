package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/helm"
	"strata.dev/strata/redact"
	"strata.dev/strata/releases"
	"strata.dev/strata/report"
)

// helmTestRun is what `strata run helm-test` is asked to do.
type helmTestRun struct {
	repoDir     string
	release     string
	cluster     config.Cluster
	pr          int
	releaseName string // overrides the release's release_name
	filters     []string
}

// strata run helm-test: the engine of /helm-test on a local checkout and a
// cluster of the caller's kubeconfig, printing the check a PR would get.
func init() {
	var r helmTestRun
	c := &cobra.Command{
		Use:   "helm-test RELEASE",
		Short: "Install or upgrade a release from a checkout's chart, run its Helm tests, print the report",
		Long: `Install or upgrade RELEASE of the checkout's .strata.yaml from its chart
and values files, run its Helm tests with every hook's logs, and remediate
as configured, the way /helm-test does, on the cluster of --kubeconfig
(and --context; the release's cluster name is not used). The Helm release
name is the release's release_name with {pr} replaced by --pr, unless
--release-name is given. Prints the markdown of the check Strata would
post on stdout; exits non-zero when the tests fail.`,
		Args: usageArgs(exactlyOne("RELEASE")),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			r.release = args[0]
			rep, err := runHelmTest(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), releases.KubeClusters{}, r)
			if err != nil {
				return err
			}
			if !rep.Passed() {
				return fmt.Errorf("helm tests of %s failed: %s", r.release, rep.Cause())
			}
			return nil
		},
	}
	c.Flags().StringVar(&r.repoDir, "repo", ".", "the checkout's root")
	c.Flags().StringVar(&r.cluster.Kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	c.Flags().StringVar(&r.cluster.Context, "context", "", "kubeconfig context (default: the current one)")
	c.Flags().IntVar(&r.pr, "pr", 0, "PR number put in place of {pr} in release_name")
	c.Flags().StringVar(&r.releaseName, "release-name", "", "Helm release name, instead of release_name")
	c.Flags().StringArrayVar(&r.filters, "filter", nil, "run only this test hook (repeatable); default: the release's test filters")
	runCmd.AddCommand(c)
}

// The report goes to out, progress to log.
func runHelmTest(ctx context.Context, out, log io.Writer, clusters releases.Clusters, r helmTestRun) (*helm.Report, error) {
	root, err := filepath.Abs(r.repoDir)
	if err != nil {
		return nil, err
	}
	rel, err := localRelease(root, r.release)
	if err != nil {
		return nil, err
	}
	in := helm.Input{
		Root: root, ChartDir: filepath.Join(root, filepath.FromSlash(rel.Chart)), ReleaseName: rel.ReleaseNameFor(r.pr),
		Namespace: rel.Namespace, Timeout: rel.Test.Timeout, Filters: rel.Test.Filters, Remediation: helm.Remediation(rel.Remediation),
	}
	if r.releaseName != "" {
		in.ReleaseName = r.releaseName
	}
	if len(r.filters) > 0 {
		in.Filters = r.filters
	}
	for _, v := range rel.Values {
		in.ValuesFiles = append(in.ValuesFiles, filepath.Join(root, filepath.FromSlash(v)))
	}
	cluster := r.cluster
	if cluster.Name == "" {
		cluster.Name = "local"
	}
	cfg, logs, err := clusters.Connect(ctx, cluster, in.Namespace)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "Testing release %s as Helm release %s in namespace %s…\n\n", rel.Name, in.ReleaseName, in.Namespace)
	rep, err := helm.Test(ctx, cfg, logs, in)
	red, _ := redact.New(nil)
	if rep != nil {
		rep.Redact(red.String)
		fmt.Fprintln(out, rep.Markdown(report.MaxCheckOutput))
	}
	if err != nil {
		return rep, fmt.Errorf("helm test of %s: %s", rel.Name, red.String(err.Error()))
	}
	return rep, nil
}

// localRelease reads the release from the checkout's .strata.yaml.
func localRelease(root, name string) (config.Release, error) {
	repo, err := localRepo(root, "releases")
	if err != nil {
		return config.Release{}, err
	}
	var known []string
	for _, rel := range repo.Releases {
		if rel.Name == name {
			return rel, nil
		}
		known = append(known, rel.Name)
	}
	return config.Release{}, unknownName("release", name, plainNames(known), filepath.Join(root, config.RepoFile))
}

// localRepo reads and validates the checkout's .strata.yaml, which must
// exist: what (releases, syncs) are defined only there.
func localRepo(root, what string) (*config.Repo, error) {
	file := filepath.Join(root, config.RepoFile)
	data, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no %s in %s: %s are defined there", config.RepoFile, root, what)
	}
	if err != nil {
		return nil, err
	}
	repo, err := config.ParseRepo(file, data)
	if err != nil {
		return nil, err
	}
	if err := repo.Validate(config.DirFS(root)); err != nil {
		return nil, err
	}
	return repo, nil
}
