package deploy

import (
	"os"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/chart/loader"
)

// dockerfile is what deploy/Dockerfile declares of the image's runtime:
// its USER and ENV.
type dockerfile struct {
	user string
	env  map[string]string
}

// parseDockerfile reads USER and ENV (KEY=VALUE pairs, continued lines)
// from a Dockerfile's text.
func parseDockerfile(text string) dockerfile {
	d := dockerfile{env: map[string]string{}}
	var lines []string
	cont := ""
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		line = cont + strings.TrimSpace(line)
		if s, ok := strings.CutSuffix(line, "\\"); ok {
			cont = s + " "
			continue
		}
		cont = ""
		lines = append(lines, line)
	}
	for _, line := range lines {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		switch strings.ToUpper(fields[0]) {
		case "USER":
			d.user = fields[1]
		case "ENV":
			for _, kv := range fields[1:] {
				if k, v, ok := strings.Cut(kv, "="); ok {
					d.env[k] = v
				}
			}
		}
	}
	return d
}

func TestParseDockerfile(t *testing.T) {
	d := parseDockerfile("FROM x\n# USER root\nENV A=1 \\\n    B=/data \\\n    C=x=y\nUSER 10001:10001\nRUN echo USER=no\n")
	if d.user != "10001:10001" || len(d.env) != 3 || d.env["A"] != "1" || d.env["B"] != "/data" || d.env["C"] != "x=y" {
		t.Errorf("parseDockerfile = %+v", d)
	}
}

// The chart runs the image as it is built: as its user (the Dockerfile's
// USER), non-root, with a read-only root file system, no privilege
// escalation and no capability, and every directory the image writes
// (the data dir, HOME, TMPDIR) on a volume.
func TestChartRunsTheImageAsBuilt(t *testing.T) {
	text, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	img := parseDockerfile(string(text))
	if img.user != "10001:10001" {
		t.Fatalf("the image's USER is %q, want 10001:10001", img.user)
	}
	r := mustRender(t, nil)
	pod := get(r.objects["StatefulSet/strata"], "spec", "template", "spec")
	for k, want := range map[string]any{"runAsNonRoot": true, "runAsUser": 10001, "runAsGroup": 10001, "fsGroup": 10001} {
		if got := get(pod, "securityContext", k); got != want {
			t.Errorf("pod securityContext.%s = %v, want %v", k, got, want)
		}
	}
	if got := get(pod, "securityContext", "seccompProfile", "type"); got != "RuntimeDefault" {
		t.Errorf("seccompProfile = %v, want RuntimeDefault", got)
	}
	c := r.container(t)
	for k, want := range map[string]any{"runAsNonRoot": true, "readOnlyRootFilesystem": true, "allowPrivilegeEscalation": false} {
		if got := get(c, "securityContext", k); got != want {
			t.Errorf("container securityContext.%s = %v, want %v", k, got, want)
		}
	}
	if drop := get(c, "securityContext", "capabilities", "drop"); !slices.Equal(toStrings(drop), []string{"ALL"}) {
		t.Errorf("capabilities dropped = %v, want [ALL]", drop)
	}
	mounts := map[string]string{}
	for _, m := range get(c, "volumeMounts").([]any) {
		mounts[get(m, "mountPath").(string)] = get(m, "name").(string)
	}
	for _, k := range []string{"STRATA_DATA_DIR", "HOME", "TMPDIR"} {
		dir := img.env[k]
		if dir == "" || mounts[dir] == "" {
			t.Errorf("the image writes %s=%q, which no volume mounts: %v", k, dir, mounts)
		}
	}
	vols := map[string]any{}
	for _, v := range get(pod, "volumes").([]any) {
		vols[get(v, "name").(string)] = v
	}
	if mounts["/tmp"] != "tmp" || get(vols["tmp"], "emptyDir") == nil {
		t.Errorf("/tmp is %q, volumes %v; want an emptyDir", mounts["/tmp"], vols)
	}
}

// The default image is the chart's appVersion, v-prefixed as releases
// are tagged; a tag given replaces it.
func TestChartImage(t *testing.T) {
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		values map[string]any
		want   string
	}{
		{nil, "ghcr.io/strata-dev/strata:v" + ch.Metadata.AppVersion},
		{map[string]any{"image": map[string]any{"repository": "registry.example.com/strata", "tag": "v9.9.9"}}, "registry.example.com/strata:v9.9.9"},
	} {
		if got := get(mustRender(t, tc.values).container(t), "image"); got != tc.want {
			t.Errorf("image with %v = %v, want %s", tc.values, got, tc.want)
		}
	}
}

// The plain manifests run the image as the chart does.
func TestKubernetesManifestRunsTheImageAsBuilt(t *testing.T) {
	data, err := os.ReadFile("kubernetes/strata.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var sts map[string]any
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		if obj["kind"] == "StatefulSet" {
			sts = obj
		}
	}
	pod := get(sts, "spec", "template", "spec")
	c := get(pod, "containers", 0)
	if get(pod, "securityContext", "runAsUser") != 10001 || get(pod, "securityContext", "fsGroup") != 10001 ||
		get(c, "securityContext", "readOnlyRootFilesystem") != true || get(c, "securityContext", "allowPrivilegeEscalation") != false {
		t.Errorf("pod securityContext %v, container %v", get(pod, "securityContext"), get(c, "securityContext"))
	}
	if get(c, "volumeMounts", 1, "mountPath") != "/tmp" || get(pod, "volumes", 0, "emptyDir") == nil {
		t.Errorf("no /tmp emptyDir: mounts %v, volumes %v", get(c, "volumeMounts"), get(pod, "volumes"))
	}
}

func toStrings(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
