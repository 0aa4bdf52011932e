package kruntimes

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func TestNewInClusterOutsideACluster(t *testing.T) {
	if os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		t.Skip("running in a pod")
	}
	if InCluster() {
		t.Fatal("InCluster outside a pod")
	}
	_, err := NewInCluster(context.Background())
	e := asError(t, err)
	if e.Code != CodeInvalidArgument || !strings.Contains(e.Hint, "NewFromKubeconfig") {
		t.Fatalf("got %v", err)
	}
}

func TestNewFromKubeconfigMissingFile(t *testing.T) {
	_, err := NewFromKubeconfig(context.Background(), t.TempDir()+"/nope.kubeconfig")
	if !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("got %v", err)
	}
	_, err = NewFromRESTConfig(context.Background(), &rest.Config{Host: "https://127.0.0.1:1"}, WithGatewayVia("sideways"))
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "ViaPortForward") {
		t.Fatalf("unknown Via: %v", err)
	}
}

func TestOptionsDefaults(t *testing.T) {
	for _, k := range []string{"KRT_GATEWAY", "KRT_GATEWAY_NAMESPACE", "KRT_KUBECTL"} {
		t.Setenv(k, "")
	}
	o := applyOptions([]Option{WithGatewayNamespace(""), WithNamespace(""), WithKubectl(""), WithDialTimeout(0), WithGatewayVia("")})
	if o.gatewayNamespace != DefaultGatewayNamespace || o.via != ViaAuto || o.kubectl != "kubectl" || o.dialTimeout != 1500*time.Millisecond || o.namespace != "" {
		t.Fatalf("defaults: %+v", o)
	}
	// As krt: the gateway settings not given come from the environment; options win.
	t.Setenv("KRT_GATEWAY", "https://gw.example")
	t.Setenv("KRT_GATEWAY_NAMESPACE", "team-gw")
	t.Setenv("KRT_KUBECTL", "/opt/kubectl")
	o = applyOptions(nil)
	if o.gatewayURL != "https://gw.example" || o.gatewayNamespace != "team-gw" || o.kubectl != "/opt/kubectl" {
		t.Fatalf("from the environment: %+v", o)
	}
	o = applyOptions([]Option{WithGatewayNamespace("mine"), WithKubectl("k")})
	if o.gatewayNamespace != "mine" || o.kubectl != "k" {
		t.Fatalf("options over the environment: %+v", o)
	}
}

// The gateway's token: WithToken, else the kubeconfig's token or token file; a client
// certificate has none, which is said at the first gateway call, not at construction.
func TestTokenSources(t *testing.T) {
	ts, _ := newTokenSource(&rest.Config{BearerToken: "kube"}, options{token: "explicit"})
	if tok, _ := ts.token(); tok != "explicit" {
		t.Fatalf("WithToken: %q", tok)
	}
	ts, _ = newTokenSource(&rest.Config{BearerToken: "kube"}, options{})
	if tok, _ := ts.token(); tok != "kube" {
		t.Fatalf("kubeconfig token: %q", tok)
	}
	file := t.TempDir() + "/token"
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts, _ = newTokenSource(&rest.Config{BearerTokenFile: file}, options{})
	if tok, err := ts.token(); tok != "from-file" || err != nil {
		t.Fatalf("token file: %q %v", tok, err)
	}
	ts, _ = newTokenSource(&rest.Config{TLSClientConfig: rest.TLSClientConfig{CertData: []byte("cert")}}, options{})
	_, err := ts.token()
	if !errors.Is(err, ErrUnauthenticated) || !strings.Contains(err.Error(), "client certificate") || !strings.Contains(err.Error(), "WithToken") {
		t.Fatalf("certificate user: %v", err)
	}
	ts, _ = newTokenSource(&rest.Config{BearerTokenFile: t.TempDir() + "/missing"}, options{})
	if _, err := ts.token(); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("missing token file: %v", err)
	}
}

// A kubeconfig exec plugin's token reaches the gateway: the plugin's wrapper sets Authorization.
func TestExecPluginToken(t *testing.T) {
	script := t.TempDir() + "/credential"
	cred := `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"from-plugin"}}`
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho '"+cred+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := &rest.Config{Host: "https://127.0.0.1:1", ExecProvider: &clientcmdapi.ExecConfig{
		Command: script, APIVersion: "client.authentication.k8s.io/v1", InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
	}}
	ts, err := newTokenSource(cfg, options{})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
	}))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	res, err := authTransport(ts.wrap(http.DefaultTransport), ts, "").RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if h := <-got; h != "Bearer from-plugin" {
		t.Fatalf("Authorization %q", h)
	}
}
