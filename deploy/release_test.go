package deploy_test

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// Where the chart mounts the config file, and the arguments every value set gives serve.
const (
	configPath = "/etc/fleetform/fleetform.yaml"
	dataDir    = "/data"
)

var commonArgs = []string{"--config=" + configPath, "--addr=0.0.0.0:8080", "--data-dir=" + dataDir, "--log-format=json"}

// checkRelease checks what every value set must give: valid metadata, one config file that
// fleetform accepts, one workload whose pod runs fleetform serve hardened, with its secrets
// from Secrets only, probed on /healthz and /readyz, and a Service in front of it.
func checkRelease(t *testing.T, m *manifest) {
	t.Helper()
	for _, k := range m.kinds {
		if k == "v1/Secret" {
			t.Error("the chart renders a Secret: secrets come from existing Secrets only")
		}
	}
	if len(m.configMaps) != 1 || len(m.services) != 1 || len(m.accounts) != 1 || len(m.statefulSets)+len(m.deployments) != 1 {
		t.Fatalf("want one ConfigMap, Service, ServiceAccount and workload, got %v", m.kinds)
	}
	checkAllMeta(t, m)

	var tmpl corev1.PodTemplateSpec
	var selector *metav1.LabelSelector
	var claims []corev1.PersistentVolumeClaim
	if len(m.statefulSets) == 1 {
		sts := m.statefulSets[0]
		tmpl, selector, claims = sts.Spec.Template, sts.Spec.Selector, sts.Spec.VolumeClaimTemplates
		if sts.Spec.ServiceName != m.services[0].Name {
			t.Errorf("the StatefulSet's serviceName %q is not the Service %q", sts.Spec.ServiceName, m.services[0].Name)
		}
	} else {
		d := m.deployments[0]
		tmpl, selector = d.Spec.Template, d.Spec.Selector
	}
	if errs := metav1validation.ValidateLabelSelector(selector, metav1validation.LabelSelectorValidationOptions{}, field.NewPath("spec", "selector")); len(errs) > 0 || len(selector.MatchLabels) == 0 {
		t.Errorf("invalid selector %+v: %v", selector, errs)
	}
	if !selects(selector.MatchLabels, tmpl.Labels) {
		t.Errorf("the selector %v does not select the pod template's labels %v", selector.MatchLabels, tmpl.Labels)
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(tmpl.Annotations["checksum/config"]) {
		t.Errorf("the pod template has no checksum/config annotation (pods restart on a config change): %v", tmpl.Annotations)
	}
	checkPod(t, m, tmpl.Spec, claims)
	checkService(t, m.services[0], tmpl)
	checkConfigMap(t, m, tmpl.Spec)
	if !strings.Contains(m.notes, "kubectl -n "+namespace+" port-forward svc/"+fullname) {
		t.Errorf("NOTES.txt does not say how to reach the service:\n%s", m.notes)
	}
}

// checkAllMeta checks names, namespaces, labels and annotations as the API server does.
func checkAllMeta(t *testing.T, m *manifest) {
	t.Helper()
	var metas []metav1.ObjectMeta
	for _, o := range m.configMaps {
		metas = append(metas, o.ObjectMeta)
	}
	for _, o := range m.accounts {
		metas = append(metas, o.ObjectMeta)
	}
	for _, o := range m.statefulSets {
		metas = append(metas, o.ObjectMeta, o.Spec.Template.ObjectMeta)
	}
	for _, o := range m.deployments {
		metas = append(metas, o.ObjectMeta, o.Spec.Template.ObjectMeta)
	}
	for _, o := range m.budgets {
		metas = append(metas, o.ObjectMeta)
	}
	for _, o := range m.ingresses {
		metas = append(metas, o.ObjectMeta)
	}
	for _, o := range m.monitors {
		metas = append(metas, o.ObjectMeta)
	}
	for _, o := range m.services {
		if errs := apivalidation.ValidateObjectMeta(&o.ObjectMeta, true, apivalidation.NameIsDNS1035Label, field.NewPath("metadata")); len(errs) > 0 {
			t.Errorf("Service %s: %v", o.Name, errs)
		}
	}
	for _, meta := range metas {
		if meta.Name == "" && meta.Namespace == "" {
			meta.Name, meta.Namespace = "pod-template", namespace // a pod template has neither
		}
		if errs := apivalidation.ValidateObjectMeta(&meta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata")); len(errs) > 0 {
			t.Errorf("%s: %v", meta.Name, errs)
		}
		if meta.Namespace != namespace {
			t.Errorf("%s is in namespace %q, want the release's %q", meta.Name, meta.Namespace, namespace)
		}
	}
}

// checkPod checks the pod spec of the workload.
func checkPod(t *testing.T, m *manifest, pod corev1.PodSpec, claims []corev1.PersistentVolumeClaim) {
	t.Helper()
	if pod.ServiceAccountName != m.accounts[0].Name {
		t.Errorf("the pod runs as %q, not the chart's ServiceAccount %q", pod.ServiceAccountName, m.accounts[0].Name)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Error("the pod mounts a Kubernetes API token; fleetform serve does not call the API")
	}
	if pod.EnableServiceLinks == nil || *pod.EnableServiceLinks {
		t.Error("service links are on: Kubernetes would set FLEETFORM_* variables (FLEETFORM_PORT, ...) in fleetform's environment")
	}
	if pod.TerminationGracePeriodSeconds == nil || *pod.TerminationGracePeriodSeconds < 60 {
		t.Errorf("terminationGracePeriodSeconds %v: an apply in flight needs time to finish after SIGTERM", pod.TerminationGracePeriodSeconds)
	}
	sc := pod.SecurityContext
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser != imageUID ||
		sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault || sc.FSGroup == nil {
		t.Errorf("pod securityContext %+v: want runAsNonRoot, runAsUser %d, an fsGroup and the RuntimeDefault seccomp profile", sc, imageUID)
	}
	if len(pod.Containers) != 1 || len(pod.InitContainers) != 0 {
		t.Fatalf("want one container, got %d (and %d init containers)", len(pod.Containers), len(pod.InitContainers))
	}
	c := pod.Containers[0]
	for _, e := range validation.IsDNS1123Label(c.Name) {
		t.Errorf("container name %q: %s", c.Name, e)
	}
	if c.Image != "ghcr.io/fleetform/fleetform:latest" {
		t.Errorf("image %q, want the chart's appVersion as the tag", c.Image)
	}
	csc := c.SecurityContext
	if csc == nil || csc.ReadOnlyRootFilesystem == nil || !*csc.ReadOnlyRootFilesystem ||
		csc.AllowPrivilegeEscalation == nil || *csc.AllowPrivilegeEscalation || (csc.Privileged != nil && *csc.Privileged) ||
		csc.Capabilities == nil || !slices.Equal(csc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(csc.Capabilities.Add) > 0 {
		t.Errorf("container securityContext %+v: want a read-only root file system, no privilege escalation, all capabilities dropped", csc)
	}
	if _, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok {
		t.Error("the container has no memory limit")
	}
	if len(c.Ports) != 1 || c.Ports[0].Name != "http" || c.Ports[0].ContainerPort != 8080 {
		t.Errorf("ports %+v: want http on 8080", c.Ports)
	}
	for name, p := range map[string]struct {
		probe *corev1.Probe
		path  string
	}{"liveness": {c.LivenessProbe, "/healthz"}, "readiness": {c.ReadinessProbe, "/readyz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Port.String() != "http" {
			t.Errorf("%s probe %+v: want GET %s on the http port", name, p.probe, p.path)
		}
	}
	checkMounts(t, m, pod, claims)
	checkEnv(t, c)
	args := containerArgs(t, pod)
	for _, want := range commonArgs {
		if !slices.Contains(args, want) {
			t.Errorf("args %q lack %s", args, want)
		}
	}
}

// checkMounts: the config file is mounted read-only from the ConfigMap; /data and /tmp
// are the only writable places (the root file system is read-only).
func checkMounts(t *testing.T, m *manifest, pod corev1.PodSpec, claims []corev1.PersistentVolumeClaim) {
	t.Helper()
	volumes := map[string]bool{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = true
		for _, e := range validation.IsDNS1123Label(v.Name) {
			t.Errorf("volume %q: %s", v.Name, e)
		}
	}
	for _, pvc := range claims {
		if volumes[pvc.Name] {
			t.Errorf("volume %q is both a pod volume and a claim template", pvc.Name)
		}
		volumes[pvc.Name] = true
	}
	writable := map[string]string{}
	paths := map[string]bool{}
	for _, vm := range pod.Containers[0].VolumeMounts {
		if !volumes[vm.Name] {
			t.Errorf("mount %s: no volume %q", vm.MountPath, vm.Name)
		}
		if paths[vm.MountPath] {
			t.Errorf("%s is mounted twice", vm.MountPath)
		}
		paths[vm.MountPath] = true
		if !vm.ReadOnly {
			writable[vm.MountPath] = vm.Name
		}
	}
	if want := map[string]string{dataDir: "data", "/tmp": "tmp"}; !maps.Equal(writable, want) {
		t.Errorf("writable mounts %v, want %v", writable, want)
	}
	if tmp := volume(pod, "tmp"); tmp == nil || tmp.EmptyDir == nil {
		t.Errorf("/tmp is not an emptyDir: %+v", tmp)
	}
	cfg := volume(pod, "config")
	if cfg == nil || cfg.ConfigMap == nil || cfg.ConfigMap.Name != m.configMaps[0].Name {
		t.Errorf("the config volume is not the ConfigMap %s: %+v", m.configMaps[0].Name, cfg)
	}
	for _, vm := range pod.Containers[0].VolumeMounts {
		if vm.Name == "config" && (vm.MountPath+"/fleetform.yaml" != configPath || !vm.ReadOnly) {
			t.Errorf("the config is mounted at %s (read-only %v), want %s read-only", vm.MountPath, vm.ReadOnly, configPath)
		}
	}
}

// checkEnv: every variable the chart sets is a secret, and comes from a Secret.
func checkEnv(t *testing.T, c corev1.Container) {
	t.Helper()
	for _, e := range c.Env {
		for _, msg := range validation.IsEnvVarName(e.Name) {
			t.Errorf("variable %q: %s", e.Name, msg)
		}
		if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name == "" {
			t.Errorf("variable %s is not read from a Secret (secretKeyRef): %+v", e.Name, e)
			continue
		}
		for _, msg := range validation.IsConfigMapKey(e.ValueFrom.SecretKeyRef.Key) {
			t.Errorf("variable %s: Secret key %q: %s", e.Name, e.ValueFrom.SecretKeyRef.Key, msg)
		}
	}
	if len(c.EnvFrom) > 0 {
		t.Errorf("envFrom %+v: the chart names each variable", c.EnvFrom)
	}
}

// checkService: the Service selects the pods and targets their http port.
func checkService(t *testing.T, svc corev1.Service, tmpl corev1.PodTemplateSpec) {
	t.Helper()
	if !selects(svc.Spec.Selector, tmpl.Labels) || len(svc.Spec.Selector) == 0 {
		t.Errorf("the Service's selector %v does not select the pods (%v)", svc.Spec.Selector, tmpl.Labels)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != "http" || svc.Spec.Ports[0].Name != "http" {
		t.Errorf("the Service's ports %+v: want http, to the pods' http port", svc.Spec.Ports)
	}
}

// checkConfigMap: the ConfigMap holds fleetform.yaml, which fleetform accepts, whose
// credentials name variables the pod sets from Secrets.
func checkConfigMap(t *testing.T, m *manifest, pod corev1.PodSpec) {
	t.Helper()
	content := configFile(t, m)
	validateConfigFile(t, "the chart's fleetform.yaml", []byte(content))
	var config struct {
		ControlPlane string `json:"controlPlane"`
		Credentials  []struct {
			URL      string `json:"url"`
			TokenEnv string `json:"tokenEnv"`
		} `json:"credentials"`
	}
	if err := yaml.Unmarshal([]byte(content), &config); err != nil {
		t.Fatal(err)
	}
	if config.ControlPlane != controlPlane {
		t.Errorf("fleetform.yaml's controlPlane is %q, want %q", config.ControlPlane, controlPlane)
	}
	for _, c := range config.Credentials {
		if e := envVar(pod, c.TokenEnv); e == nil || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			t.Errorf("credential %s reads variable %q, which the pod does not set from a Secret", c.URL, c.TokenEnv)
		}
	}
}

// configFile returns the fleetform.yaml of the ConfigMap.
func configFile(t *testing.T, m *manifest) string {
	t.Helper()
	data := m.configMaps[0].Data
	if len(data) != 1 || data["fleetform.yaml"] == "" {
		t.Fatalf("the ConfigMap must hold fleetform.yaml only: %v", data)
	}
	return data["fleetform.yaml"]
}

// containerArgs returns the arguments of the fleetform container.
func containerArgs(t *testing.T, pod corev1.PodSpec) []string {
	t.Helper()
	if len(pod.Containers) == 0 {
		t.Fatal("no container")
	}
	return pod.Containers[0].Args
}

func volume(pod corev1.PodSpec, name string) *corev1.Volume {
	for i := range pod.Volumes {
		if pod.Volumes[i].Name == name {
			return &pod.Volumes[i]
		}
	}
	return nil
}

func envVar(pod corev1.PodSpec, name string) *corev1.EnvVar {
	for _, c := range pod.Containers {
		for i := range c.Env {
			if c.Env[i].Name == name {
				return &c.Env[i]
			}
		}
	}
	return nil
}

// selects says whether a label selector's matchLabels select labels.
func selects(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}
