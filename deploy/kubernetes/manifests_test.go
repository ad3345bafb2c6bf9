// Package kubernetes_test checks the manifests of deploy/kubernetes
// offline: against the Kubernetes schema, and against what mcpbridge
// needs of them.
package kubernetes_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/mcpclient/clientkind"
)

var manifests = []string{"configmap.yaml", "deployment.yaml", "service.yaml", "hpa.yaml"}

// Every manifest is valid against the Kubernetes OpenAPI schema (types,
// required fields), checked offline by the pinned kubernetes-models
// package; a broken one is caught.
func TestManifestsValidate(t *testing.T) {
	node := mcptest.ThirdPartyBin(t, "node")
	validate := func(files ...string) (string, error) {
		cmd := exec.Command(node, append([]string{filepath.Join("testdata", "validate.mjs")}, files...)...)
		cmd.Env = append(os.Environ(), "NODE_MODULES="+filepath.Dir(filepath.Dir(node)))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := validate(manifests...)
	if err != nil || strings.Count(out, ": valid\n") != len(manifests) {
		t.Fatalf("validation: %v\n%s", err, out)
	}
	broken := filepath.Join(t.TempDir(), "deployment.yaml")
	data := strings.Replace(string(read(t, "deployment.yaml")), "replicas: 2", "replicas: two", 1)
	if err := os.WriteFile(broken, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := validate(broken); err == nil || !strings.Contains(out, "replicas must be integer") {
		t.Errorf("a string replica count passed: %v\n%s", err, out)
	}
}

// The deployment runs mcpbridge as it must run in a cluster, and the
// ConfigMap's config is one mcpbridge accepts.
func TestDeploymentShape(t *testing.T) {
	var dep struct {
		Spec struct {
			Template struct {
				Spec struct {
					SecurityContext struct {
						RunAsNonRoot bool `yaml:"runAsNonRoot"`
					} `yaml:"securityContext"`
					Containers []struct {
						Args           []string `yaml:"args"`
						ReadinessProbe probe    `yaml:"readinessProbe"`
						LivenessProbe  probe    `yaml:"livenessProbe"`
						VolumeMounts   []struct {
							MountPath string `yaml:"mountPath"`
							SubPath   string `yaml:"subPath"`
						} `yaml:"volumeMounts"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	decode(t, "deployment.yaml", &dep)
	pod := dep.Spec.Template.Spec
	if !pod.SecurityContext.RunAsNonRoot || len(pod.Containers) != 1 {
		t.Fatalf("pod spec %+v", pod)
	}
	c := pod.Containers[0]
	for _, flag := range []string{"--stateless", "--token-env", "--metrics-addr", "--config"} {
		if !slices.Contains(c.Args, flag) {
			t.Errorf("args %v lack %s", c.Args, flag)
		}
	}
	if c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe.HTTPGet.Path != "/livez" ||
		c.ReadinessProbe.HTTPGet.Port != "metrics" || c.LivenessProbe.HTTPGet.Port != "metrics" {
		t.Errorf("probes %+v %+v, want /readyz and /livez on the metrics port (no token there)", c.ReadinessProbe, c.LivenessProbe)
	}
	configPath := c.Args[slices.Index(c.Args, "--config")+1]
	for _, m := range c.VolumeMounts {
		if m.MountPath == filepath.Dir(configPath) && m.SubPath != "" {
			t.Errorf("the config is mounted with subPath, which never sees a ConfigMap update")
		}
	}

	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	decode(t, "configmap.yaml", &cm)
	config, ok := cm.Data[filepath.Base(configPath)]
	if !ok {
		t.Fatalf("the ConfigMap has no %s", filepath.Base(configPath))
	}
	cat := host.NewCatalog(clientkind.NewKind(clientkind.KindOptions{}))
	lookup := func(k string) (string, bool) { return "/mcpbridge", k == "MCPBRIDGE_EXE" }
	if _, err := cat.Parse(configPath, []byte(config), lookup); err != nil {
		t.Errorf("the ConfigMap's config: %v", err)
	}
}

type probe struct {
	HTTPGet struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	} `yaml:"httpGet"`
}

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decode(t *testing.T, name string, v any) {
	t.Helper()
	if err := yaml.Unmarshal(read(t, name), v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}
