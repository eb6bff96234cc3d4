package checks

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

const chartDir = "../helm/drconsole"

// renderedConfigFile is the chart's config rendered with full, for the
// console's loader in deploy/helm.
const renderedConfigFile = "testdata/rendered-config.yaml"

var update = flag.Bool("update", false, "rewrite testdata/rendered-config.yaml from the chart")

// full turns every optional part on, with a config a console would run.
var full = map[string]any{
	"config": map[string]any{
		"clusters": map[string]any{
			"primary": map[string]any{"bootstrap": []any{"kafka-primary:9092"},
				"sasl": map[string]any{"mechanism": "SCRAM-SHA-512", "username": "drconsole", "password_file": "/run/secrets/drconsole/kafka-password"}},
			"dr": map[string]any{"bootstrap": []any{"kafka-dr:9092"}},
		},
		"flows": []any{map[string]any{"source": "primary", "target": "dr", "replication_policy": "identity", "offset_syncs_location": "target"}},
		"auth":  map[string]any{"mode": "local", "public_url": "https://drconsole.example.com"},
	},
	"secrets":           map[string]any{"kafka-password": "s3cret"},
	"litestream":        map[string]any{"enabled": true, "replicaURL": "s3://backups/drconsole", "envFromSecret": "litestream-s3"},
	"metrics":           map[string]any{"serviceMonitor": map[string]any{"enabled": true}, "prometheusRule": map[string]any{"enabled": true}},
	"kubernetesRestore": map[string]any{"enabled": true, "namespaces": []any{"flink-dr"}},
}

func load(t *testing.T) *chart.Chart {
	t.Helper()
	c, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func render(t *testing.T, values map[string]any) map[string]string {
	t.Helper()
	c := load(t)
	vals, err := chartutil.ToRenderValues(c, values, chartutil.ReleaseOptions{Name: "drconsole", Namespace: "kafka-dr", IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	out, err := engine.Render(c, vals)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestChartLints(t *testing.T) {
	for name, values := range map[string]map[string]any{"defaults": nil, "full": full} {
		linter := lint.AllWithKubeVersion(chartDir, values, "kafka-dr", nil)
		for _, m := range linter.Messages {
			if m.Severity >= support.WarningSev {
				t.Errorf("%s: %s", name, m)
			}
		}
	}
}

// objects splits the rendered templates into documents and decodes each
// into its Kubernetes API type, refusing fields the type does not have.
func objects(t *testing.T, rendered map[string]string) map[string]any {
	t.Helper()
	out := map[string]any{}
	for file, text := range rendered {
		for _, doc := range strings.Split(text, "\n---") {
			if strings.TrimSpace(doc) == "" || strings.TrimSpace(strings.TrimPrefix(doc, "---")) == "" {
				continue
			}
			js, err := yaml.YAMLToJSON([]byte(doc))
			if err != nil {
				t.Fatalf("%s: %v\n%s", file, err, doc)
			}
			var meta struct{ APIVersion, Kind string }
			json.Unmarshal(js, &meta)
			var obj any
			switch meta.APIVersion + " " + meta.Kind {
			case "apps/v1 Deployment":
				obj = &appsv1.Deployment{}
			case "v1 Service":
				obj = &corev1.Service{}
			case "v1 ConfigMap":
				obj = &corev1.ConfigMap{}
			case "v1 Secret":
				obj = &corev1.Secret{}
			case "v1 PersistentVolumeClaim":
				obj = &corev1.PersistentVolumeClaim{}
			case "v1 ServiceAccount":
				obj = &corev1.ServiceAccount{}
			case "rbac.authorization.k8s.io/v1 Role":
				obj = &rbacv1.Role{}
			case "rbac.authorization.k8s.io/v1 RoleBinding":
				obj = &rbacv1.RoleBinding{}
			case "networking.k8s.io/v1 NetworkPolicy":
				obj = &networkingv1.NetworkPolicy{}
			case "monitoring.coreos.com/v1 ServiceMonitor":
				obj = &monitoringv1.ServiceMonitor{} // the prometheus-operator's own API types
			case "monitoring.coreos.com/v1 PrometheusRule":
				obj = &monitoringv1.PrometheusRule{}
			default:
				t.Fatalf("%s: unexpected object %s %s", file, meta.APIVersion, meta.Kind)
			}
			dec := json.NewDecoder(bytes.NewReader(js))
			dec.DisallowUnknownFields()
			if err := dec.Decode(obj); err != nil {
				t.Fatalf("%s: %s %s does not match the Kubernetes type: %v", file, meta.APIVersion, meta.Kind, err)
			}
			key := meta.Kind
			for out[key] != nil {
				key += "+"
			}
			out[key] = obj
		}
	}
	return out
}

func TestChartRendersWhatItPromises(t *testing.T) {
	for name, values := range map[string]map[string]any{"defaults": nil, "full": full} {
		t.Run(name, func(t *testing.T) {
			objs := objects(t, render(t, values))
			d, ok := objs["Deployment"].(*appsv1.Deployment)
			if !ok {
				t.Fatalf("no Deployment: %v", objs)
			}
			if *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
				t.Errorf("replicas %d strategy %s: want 1 and Recreate (one console per database)", *d.Spec.Replicas, d.Spec.Strategy.Type)
			}
			pod := d.Spec.Template.Spec
			if pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot {
				t.Error("pod may run as root")
			}
			for _, c := range pod.Containers {
				sc := c.SecurityContext
				if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation {
					t.Errorf("container %s: want a read-only root and no privilege escalation", c.Name)
				}
			}
			c := pod.Containers[0]
			if c.LivenessProbe.HTTPGet.Path != "/healthz" || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
				t.Errorf("probes %s %s", c.LivenessProbe.HTTPGet.Path, c.ReadinessProbe.HTTPGet.Path)
			}
			if _, ok := objs["PersistentVolumeClaim"]; !ok {
				t.Error("no PVC for the database")
			}
			if name != "full" {
				return
			}
			// The rendered config is testdata/rendered-config.yaml, which
			// deploy/helm loads with drconsole's own loader (as the chart
			// mounts them there): the secret files it names are where the
			// chart mounts them.
			cm := objs["ConfigMap"].(*corev1.ConfigMap)
			text := cm.Data["drconsole.yaml"]
			secretDir := "/run/secrets/drconsole"
			if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == secretDir }) {
				t.Fatalf("secrets not mounted at %s", secretDir)
			}
			if *update {
				if err := os.WriteFile(renderedConfigFile, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if b, err := os.ReadFile(renderedConfigFile); err != nil || string(b) != text {
				t.Fatalf("the rendered config is not %s, which deploy/helm's TestRenderedConfigLoads loads (%v); run go test -run TestChartRendersWhatItPromises -update\n%s", renderedConfigFile, err, text)
			}
			if len(pod.Containers) != 2 || pod.Containers[1].Name != "litestream" || pod.Containers[1].Args[2] != "s3://backups/drconsole" {
				t.Errorf("litestream sidecar: %+v", pod.Containers)
			}
			role, ok := objs["Role"].(*rbacv1.Role)
			if !ok || role.Namespace != "flink-dr" {
				t.Fatalf("kubernetes restore: Role %+v", objs["Role"])
			}
			if plain := plainRole(t); !reflect.DeepEqual(role.Rules, plain.Rules) {
				t.Errorf("the chart's Role grants %+v, deploy/rbac.yaml (what the code uses) %+v", role.Rules, plain.Rules)
			}
			if rb, ok := objs["RoleBinding"].(*rbacv1.RoleBinding); !ok || rb.Subjects[0].Name != pod.ServiceAccountName || rb.Subjects[0].Namespace != "kafka-dr" {
				t.Errorf("kubernetes restore: RoleBinding %+v for service account %s", objs["RoleBinding"], pod.ServiceAccountName)
			}
			// Prometheus finds the console: the ServiceMonitor selects the
			// Service by its labels and scrapes a port the Service names.
			svc := objs["Service"].(*corev1.Service)
			sm := objs["ServiceMonitor"].(*monitoringv1.ServiceMonitor)
			for k, v := range sm.Spec.Selector.MatchLabels {
				if svc.Labels[k] != v {
					t.Errorf("the ServiceMonitor selects %s=%s; the Service has %s=%q", k, v, k, svc.Labels[k])
				}
			}
			if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Path != "/metrics" ||
				!slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == sm.Spec.Endpoints[0].Port }) {
				t.Errorf("ServiceMonitor endpoints %+v do not scrape /metrics on a port of the Service %+v", sm.Spec.Endpoints, svc.Spec.Ports)
			}
			// The PrometheusRule holds exactly the shipped rules.
			var shipped monitoringv1.PrometheusRuleSpec
			if b, err := os.ReadFile("../prometheus-rules.yaml"); err != nil {
				t.Fatal(err)
			} else if err := yaml.UnmarshalStrict(b, &shipped); err != nil {
				t.Fatalf("deploy/prometheus-rules.yaml as a PrometheusRule spec: %v", err)
			}
			if rule := objs["PrometheusRule"].(*monitoringv1.PrometheusRule); len(shipped.Groups) == 0 || !reflect.DeepEqual(rule.Spec, shipped) {
				t.Errorf("the chart's PrometheusRule is not deploy/prometheus-rules.yaml: %d groups vs %d", len(rule.Spec.Groups), len(shipped.Groups))
			}
		})
	}
}

// A Secret and a claim the user manages: the chart makes neither and
// mounts both by name.
func TestChartUsesExistingSecretAndClaim(t *testing.T) {
	objs := objects(t, render(t, map[string]any{"existingSecret": "drconsole-secrets", "persistence": map[string]any{"existingClaim": "drconsole-data"}}))
	for _, kind := range []string{"Secret", "PersistentVolumeClaim"} {
		if objs[kind] != nil {
			t.Errorf("the chart made a %s though an existing one is named", kind)
		}
	}
	pod := objs["Deployment"].(*appsv1.Deployment).Spec.Template.Spec
	vols := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		vols[v.Name] = v
	}
	if v := vols["secrets"]; v.Secret == nil || v.Secret.SecretName != "drconsole-secrets" {
		t.Errorf("secrets volume %+v, want the Secret drconsole-secrets", v)
	}
	if v := vols["data"]; v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "drconsole-data" {
		t.Errorf("data volume %+v, want the claim drconsole-data", v)
	}
	if !slices.ContainsFunc(pod.Containers[0].VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "secrets" && m.MountPath == "/run/secrets/drconsole" }) {
		t.Error("the existing Secret is not mounted at /run/secrets/drconsole")
	}
}

// plainRole is the Role of deploy/rbac.yaml.
func plainRole(t *testing.T) *rbacv1.Role {
	t.Helper()
	b, err := os.ReadFile("../rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	role, ok := objects(t, map[string]string{"rbac.yaml": string(b)})["Role"].(*rbacv1.Role)
	if !ok {
		t.Fatal("deploy/rbac.yaml has no Role")
	}
	return role
}

// Litestream without a replica is refused at render time, not at 3 a.m.
func TestChartRefusesLitestreamWithoutReplica(t *testing.T) {
	c := load(t)
	vals, err := chartutil.ToRenderValues(c, map[string]any{"litestream": map[string]any{"enabled": true}},
		chartutil.ReleaseOptions{Name: "drconsole", Namespace: "x", IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := engine.Render(c, vals); err == nil || !strings.Contains(err.Error(), "litestream.replicaURL is required") {
		t.Fatalf("render: %v", err)
	}
}

// The NetworkPolicy is on by default: it selects the console's pod and
// lets only the ingress controller and Prometheus reach its port; egress
// stays open unless listed. Off, there is none.
func TestChartNetworkPolicy(t *testing.T) {
	objs := objects(t, render(t, nil))
	np, ok := objs["NetworkPolicy"].(*networkingv1.NetworkPolicy)
	if !ok {
		t.Fatal("no NetworkPolicy by default")
	}
	d := objs["Deployment"].(*appsv1.Deployment)
	for k, v := range np.Spec.PodSelector.MatchLabels {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("the policy selects %s=%s; the pod has %q", k, v, d.Spec.Template.Labels[k])
		}
	}
	if len(np.Spec.PodSelector.MatchLabels) == 0 {
		t.Fatal("the policy selects every pod of the namespace")
	}
	if !reflect.DeepEqual(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) || len(np.Spec.Egress) != 0 {
		t.Errorf("policy types %v, egress %v: want ingress only, egress open", np.Spec.PolicyTypes, np.Spec.Egress)
	}
	if len(np.Spec.Ingress) != 1 {
		t.Fatalf("ingress rules %+v", np.Spec.Ingress)
	}
	in := np.Spec.Ingress[0]
	var from []string
	for _, p := range in.From {
		if p.NamespaceSelector == nil || p.PodSelector == nil || p.IPBlock != nil {
			t.Errorf("peer %+v: want a namespace and pod selector", p)
			continue
		}
		from = append(from, p.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"]+"/"+p.PodSelector.MatchLabels["app.kubernetes.io/name"])
	}
	if !slices.Equal(from, []string{"ingress-nginx/ingress-nginx", "monitoring/prometheus"}) {
		t.Errorf("allowed peers %v, want the ingress controller and Prometheus", from)
	}
	if len(in.Ports) != 1 || in.Ports[0].Port.String() != "http" {
		t.Errorf("ports %+v, want the http port only", in.Ports)
	}

	objs = objects(t, render(t, map[string]any{"networkPolicy": map[string]any{"enabled": false}}))
	if objs["NetworkPolicy"] != nil {
		t.Error("a NetworkPolicy though networkPolicy.enabled is false")
	}
	egress := []any{map[string]any{"to": []any{map[string]any{"ipBlock": map[string]any{"cidr": "192.0.2.0/24"}}}}}
	np = objects(t, render(t, map[string]any{"networkPolicy": map[string]any{"egress": egress}}))["NetworkPolicy"].(*networkingv1.NetworkPolicy)
	if len(np.Spec.PolicyTypes) != 2 || len(np.Spec.Egress) != 1 || np.Spec.Egress[0].To[0].IPBlock.CIDR != "192.0.2.0/24" {
		t.Errorf("egress listed: types %v egress %+v", np.Spec.PolicyTypes, np.Spec.Egress)
	}
}

// Secrets never land in the ConfigMap: a config with one inline fails to
// render, naming the key and the _file to use; the same config naming
// files renders, and the ConfigMap holds none of the secret values.
func TestChartRefusesInlineSecrets(t *testing.T) {
	c := load(t)
	base := func() map[string]any {
		return map[string]any{
			"clusters": map[string]any{"primary": map[string]any{"bootstrap": []any{"p:9092"},
				"sasl": map[string]any{"mechanism": "PLAIN", "username": "u", "password_file": "/run/secrets/drconsole/kafka"}}},
			"auth": map[string]any{"mode": "oidc", "public_url": "https://dr.example.com",
				"oidc": map[string]any{"issuer": "https://idp.example.com", "client_id": "drconsole", "client_secret_file": "/run/secrets/drconsole/oidc"}},
			"notifications": map[string]any{"webhooks": []any{
				map[string]any{"name": "slack", "kind": "slack", "url_file": "/run/secrets/drconsole/slack"},
				map[string]any{"name": "ops", "url": "", "url_file": "/run/secrets/drconsole/ops", "secret_file": "/run/secrets/drconsole/hmac"}}},
			"flink_targets": []any{map[string]any{"name": "dr", "rest_url": "https://flink-dr:8081"}},
		}
	}
	renderCfg := func(cfg map[string]any) (map[string]string, error) {
		vals, err := chartutil.ToRenderValues(c, map[string]any{"config": cfg}, chartutil.ReleaseOptions{Name: "drconsole", Namespace: "x", IsInstall: true}, chartutil.DefaultCapabilities)
		if err != nil {
			t.Fatal(err)
		}
		return engine.Render(c, vals)
	}
	out, err := renderCfg(base())
	if err != nil {
		t.Fatalf("secrets named by file: %v", err)
	}
	for _, leak := range []string{"hooks.slack.com", "s3cret"} {
		if strings.Contains(out["drconsole/templates/configmap.yaml"], leak) {
			t.Errorf("the ConfigMap holds %q", leak)
		}
	}
	for name, tc := range map[string]struct {
		set  func(cfg map[string]any)
		want string
	}{
		"sasl password": {func(cfg map[string]any) {
			cfg["clusters"].(map[string]any)["primary"].(map[string]any)["sasl"].(map[string]any)["password"] = "s3cret"
		}, "config.clusters.primary.sasl.password is a secret"},
		"oidc client secret": {func(cfg map[string]any) {
			cfg["auth"].(map[string]any)["oidc"].(map[string]any)["client_secret"] = "s3cret"
		}, "config.auth.oidc.client_secret is a secret"},
		"slack url": {func(cfg map[string]any) {
			cfg["notifications"].(map[string]any)["webhooks"].([]any)[0].(map[string]any)["url"] = "https://hooks.slack.com/services/T0/B0/s3cret"
		}, "config.notifications.webhooks[0].url: a webhook URL is a credential"},
		"webhook hmac": {func(cfg map[string]any) {
			cfg["notifications"].(map[string]any)["webhooks"].([]any)[1].(map[string]any)["secret"] = "s3cret"
		}, "config.notifications.webhooks[1].secret is a secret"},
		"cluster link password": {func(cfg map[string]any) {
			cfg["flows"] = []any{map[string]any{"kind": "cluster-link", "cluster_link": map[string]any{"rest_url": "https://dr:8090/kafka", "password": "s3cret"}}}
		}, "config.flows[0].cluster_link.password is a secret"},
		"credentials in a URL": {func(cfg map[string]any) {
			cfg["flink_targets"].([]any)[0].(map[string]any)["rest_url"] = "https://admin:s3cret@flink-dr:8081"
		}, "config.flink_targets[0].rest_url carries a user name or password"},
	} {
		cfg := base()
		tc.set(cfg)
		if _, err := renderCfg(cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s inline: render error %v, want %q", name, err, tc.want)
		}
	}
}

// The chart's and the config's proxy-mode examples trust the proxy's own
// address, never a whole private network (anything in it could name any
// user through the identity header).
func TestProxyExamplesTrustNoNetwork(t *testing.T) {
	for _, file := range []string{chartDir + "/values.yaml", "../../drconsole.example.yaml"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, wide := range []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "0.0.0.0/0", "::/0", "fd00::/8"} {
			if strings.Contains(string(b), wide) {
				t.Errorf("%s trusts %s in an example", file, wide)
			}
		}
	}
}
