// Package kubernetes_test checks the manifests of deploy/kubernetes
// offline: against the Kubernetes schema, and against what mcpbridge
// needs of them.
package kubernetes_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/gatewayauth"
	clientkind "github.com/mcpbridge/mcpbridge/internal/kinds/client"
	gatewaykind "github.com/mcpbridge/mcpbridge/internal/kinds/gateway"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

var manifests = []string{"configmap.yaml", "deployment.yaml", "service.yaml", "hpa.yaml", "redis-deployment.yaml", "redis-service.yaml"}

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
	data := strings.Replace(string(read(t, "deployment.yaml")), "replicas: 3", "replicas: two", 1)
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
			Replicas int `yaml:"replicas"`
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
	cat := host.NewCatalog(clientkind.NewKind(clientkind.KindOptions{}), gatewaykind.NewKind(nil))
	env := map[string]string{"MCPBRIDGE_EXE": "/mcpbridge", "REDIS_PASSWORD": "pw"}
	plan, err := cat.Parse(configPath, []byte(config), func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatalf("the ConfigMap's config: %v", err)
	}
	checkStore(t, plan, dep.Spec.Replicas)
}

// checkStore checks that the replicas share a store, the one the manifests
// run: the gateway entry's store is the Redis Service's address.
func checkStore(t *testing.T, plan *host.Plan, replicas int) {
	t.Helper()
	if replicas != 3 {
		t.Errorf("the Deployment runs %d replicas, want 3", replicas)
	}
	var svc struct {
		Metadata struct{ Name string } `yaml:"metadata"`
		Spec     struct {
			Ports []struct{ Port int } `yaml:"ports"`
		} `yaml:"spec"`
	}
	decode(t, "redis-service.yaml", &svc)
	for _, pe := range plan.Enabled() {
		if cfg, ok := pe.Spec.Config.(gatewayauth.Config); ok && cfg.Store != nil {
			if want := fmt.Sprintf("%s:%d", svc.Metadata.Name, svc.Spec.Ports[0].Port); cfg.Store.Addr != want {
				t.Errorf("the gateway entry's store is %s, want the Redis Service %s", cfg.Store.Addr, want)
			}
			return
		}
	}
	t.Error("the ConfigMap's gateway entry has no store: each replica would keep its own limits")
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
