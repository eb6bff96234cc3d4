package kubeapi

import (
	"context"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.etcd.io/etcd/server/v3/embed"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	servertesting "k8s.io/apiextensions-apiserver/pkg/cmd/server/testing"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"

	"github.com/drconsole/drconsole/kube"
)

// CRDs are the operator's published CRD files this package installs
// (helm/flink-kubernetes-operator/crds/ of flink-kubernetes-operator
// release 1.15.0, testdata/README.md).
var CRDs = []string{"flinkdeployments.flink.apache.org-v1.yml", "flinkstatesnapshots.flink.apache.org-v1.yml"}

// APIServer is a running apiextensions-apiserver on its own etcd.
type APIServer struct {
	// Config reaches it with the loopback credentials (system:masters).
	Config *rest.Config
	CRDs   clientset.Interface
	// Served are the resources whose CRDs are installed.
	Served []string
}

// Start starts etcd and the API server, installs CRDs (edit, when set,
// changes each before it is created, and leaves it out when it answers
// false) and waits until discovery serves them; both stop with the test.
func Start(t testing.TB, edit func(*apiextensionsv1.CustomResourceDefinition) bool) *APIServer {
	t.Helper()
	// The server's own log (klog) would bury the test's lines; what a
	// test checks is in the API's answers.
	klog.SetLogger(logr.Discard())
	etcdURL := startEtcd(t)
	// Without a kube-apiserver beside it: the delegated authentication and
	// authorization get a kubeconfig they never reach (the loopback token
	// is system:masters), and the admission steps that ask the
	// kube-apiserver (namespaces, webhooks, policies) are off.
	nowhere := writeKubeconfig(t, &clientcmdapi.Cluster{Server: "http://127.0.0.1:9"}, &clientcmdapi.AuthInfo{Token: "unused"})
	srv, err := servertesting.StartTestServer(t, nil, []string{"--etcd-servers", etcdURL, "--etcd-prefix", "/drconsole",
		"--authentication-skip-lookup", "--authentication-kubeconfig", nowhere, "--authorization-kubeconfig", nowhere, "--kubeconfig", nowhere,
		"--enable-priority-and-fairness=false",
		"--disable-admission-plugins", "NamespaceLifecycle,MutatingAdmissionWebhook,ValidatingAdmissionWebhook,ValidatingAdmissionPolicy,MutatingAdmissionPolicy",
	}, nil)
	if err != nil {
		t.Fatalf("apiextensions-apiserver: %v", err)
	}
	t.Cleanup(srv.TearDownFn)
	rc := rest.CopyConfig(srv.ClientConfig)
	rc.QPS, rc.Burst = 1000, 1000 // tests poll every few milliseconds
	a := &APIServer{Config: rc, CRDs: clientset.NewForConfigOrDie(rc)}
	for _, f := range CRDs {
		if r := a.install(t, f, edit); r != "" {
			a.Served = append(a.Served, r)
		}
	}
	a.waitServed(t, a.Served)
	return a
}

// startEtcd starts a one-member etcd in a temporary directory and returns
// its client URL.
func startEtcd(t testing.TB) string {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Dir = t.TempDir()
	cfg.LogLevel = "panic"   // its shutdown is logged as errors
	cfg.UnsafeNoFsync = true // a test's data: speed over durability
	urls := freeURLs(t, 2)
	client, peer := urls[0], urls[1]
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatalf("etcd: %v", err)
	}
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		t.Fatalf("etcd: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("etcd not ready within a minute")
	}
	return client.String()
}

// freeURLs are n http URLs on loopback ports free a moment ago (held
// open together, so they differ).
func freeURLs(t testing.TB, n int) []url.URL {
	t.Helper()
	var urls []url.URL
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		urls = append(urls, url.URL{Scheme: "http", Host: l.Addr().String()})
	}
	return urls
}

// testdata is this package's testdata directory, wherever the test runs.
func testdata(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata", name)
}

// install installs the CRD of file and returns its resource ("" when
// edit left it out).
func (a *APIServer) install(t testing.TB, file string, edit func(*apiextensionsv1.CustomResourceDefinition) bool) string {
	t.Helper()
	b, err := os.ReadFile(testdata(file))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(b, &crd); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if edit != nil && !edit(&crd) {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := a.CRDs.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, &crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("install %s: %v", file, err)
	}
	for {
		got, err := a.CRDs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err == nil && established(got) {
			return crd.Spec.Names.Plural
		}
		if ctx.Err() != nil {
			t.Fatalf("CRD %s not established: %v %+v", crd.Name, err, got.Status.Conditions)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

// waitServed waits until discovery lists the resources: an established
// CRD is served a moment later.
func (a *APIServer) waitServed(t testing.TB, resources []string) {
	t.Helper()
	disc := discovery.NewDiscoveryClientForConfigOrDie(a.Config)
	deadline := time.Now().Add(time.Minute)
	for {
		list, err := disc.ServerResourcesForGroupVersion(kube.Group + "/" + kube.Version)
		n := 0
		if err == nil {
			for _, r := range list.APIResources {
				if slices.Contains(resources, r.Name) {
					n++
				}
			}
		}
		if n == len(resources) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s/%s %v not served: %v", kube.Group, kube.Version, resources, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Kubeconfig writes a kubeconfig file that reaches the server (what an
// administrator gives the console) and returns its path.
func (a *APIServer) Kubeconfig(t testing.TB) string {
	t.Helper()
	return writeKubeconfig(t, &clientcmdapi.Cluster{Server: a.Config.Host, CertificateAuthorityData: a.Config.CAData, TLSServerName: a.Config.ServerName},
		&clientcmdapi.AuthInfo{Token: a.Config.BearerToken})
}

func writeKubeconfig(t testing.TB, cluster *clientcmdapi.Cluster, user *clientcmdapi.AuthInfo) string {
	t.Helper()
	c := clientcmdapi.NewConfig()
	c.Clusters["test"], c.AuthInfos["test"] = cluster, user
	c.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "test"}
	c.CurrentContext = "test"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*c, path); err != nil {
		t.Fatal(err)
	}
	return path
}
