package kruntimes

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// DefaultGatewayNamespace is where the gateway Service is looked for unless
// [WithGatewayNamespace] or $KRT_GATEWAY_NAMESPACE say otherwise: the namespace the chart's docs
// install into.
const DefaultGatewayNamespace = "kruntimes"

// The mounted ServiceAccount's namespace and token in a pod.
const (
	inClusterNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
	inClusterTokenFile     = "/var/run/secrets/kubernetes.io/serviceaccount/token"
)

// Via says how a client reaches a discovered gateway.
type Via string

// The ways to reach the gateway.
const (
	// ViaAuto: in a cluster, the Service's DNS name; outside, the gateway pods' IPs when one
	// answers, else a port-forward.
	ViaAuto Via = "auto"
	// ViaService: https://<service>.<namespace>.svc (needs the cluster's DNS).
	ViaService Via = "service"
	// ViaDirect: the gateway pods' IPs (inside the pod network, on nodes, over a VPN).
	ViaDirect Via = "direct"
	// ViaPortForward: `kubectl port-forward` to one gateway pod, opened and closed by the client.
	ViaPortForward Via = "port-forward"
)

// Option configures a [Client].
type Option func(*options)

type options struct {
	namespace        string
	gatewayNamespace string
	gatewayURL       string
	via              Via
	ca               []byte
	caFile           string
	insecure         bool
	token            string
	tokenFile        string
	kubectl          string
	kubeContext      string
	dialTimeout      time.Duration
	grpc             bool
	userAgent        string
}

// WithNamespace sets the namespace of the client's Runs (default: the kubeconfig context's
// namespace, or the pod's own in a cluster). [Client.InNamespace] switches per use. An empty
// name keeps the default.
func WithNamespace(ns string) Option { return func(o *options) { o.namespace = ns } }

// WithGatewayNamespace sets the namespace of the gateway Service. Empty (the default): the
// environment variable KRT_GATEWAY_NAMESPACE, else "kruntimes" — as krt and the Python SDK.
func WithGatewayNamespace(ns string) Option { return func(o *options) { o.gatewayNamespace = ns } }

// WithGatewayURL uses the gateway at url (an Ingress, a LoadBalancer, your own port-forward)
// instead of discovering it. Its host name is verified against the system's roots plus the
// chart's CA when it can be read (or the CA given with [WithCA]/[WithCAFile]). Empty (the
// default): the environment variable KRT_GATEWAY, else discovery.
func WithGatewayURL(url string) Option { return func(o *options) { o.gatewayURL = url } }

// WithGatewayVia says how to reach a discovered gateway (default [ViaAuto]).
func WithGatewayVia(v Via) Option { return func(o *options) { o.via = v } }

// WithCA trusts this PEM bundle for the gateway instead of the chart's published CA.
func WithCA(pem []byte) Option { return func(o *options) { o.ca = pem } }

// WithCAFile trusts the PEM bundle in this file for the gateway (e.g. a mounted ConfigMap).
func WithCAFile(path string) Option { return func(o *options) { o.caFile = path } }

// WithInsecureSkipVerify does not verify the gateway's certificate. For tests only.
func WithInsecureSkipVerify() Option { return func(o *options) { o.insecure = true } }

// WithToken sends this bearer token to the gateway instead of the kubeconfig's (the Kubernetes
// API is still called with the kubeconfig's credentials).
func WithToken(token string) Option { return func(o *options) { o.token = token } }

// WithTokenFile sends the token in this file to the gateway, re-read when it changes (e.g. a
// projected ServiceAccount token).
func WithTokenFile(path string) Option { return func(o *options) { o.tokenFile = path } }

// WithKubectl names the kubectl binary that opens port-forwards (default: the environment
// variable KRT_KUBECTL, else "kubectl" on PATH).
func WithKubectl(path string) Option { return func(o *options) { o.kubectl = path } }

// WithKubeContext selects a kubeconfig context other than the current one
// ([NewFromKubeconfig] only).
func WithKubeContext(name string) Option { return func(o *options) { o.kubeContext = name } }

// WithDialTimeout bounds one connection attempt to a gateway pod (default 1.5s).
func WithDialTimeout(d time.Duration) Option { return func(o *options) { o.dialTimeout = d } }

// WithGRPC calls the gateway with the gRPC protocol instead of Connect (both over HTTP/2).
func WithGRPC() Option { return func(o *options) { o.grpc = true } }

// WithUserAgent sets the User-Agent of the client's requests.
func WithUserAgent(ua string) Option { return func(o *options) { o.userAgent = ua } }

// Client drives kruntimes: Runs through the Kubernetes API, functions and sessions through the
// gateway. It is safe for concurrent use. Close it to stop a port-forward it opened.
type Client struct {
	namespace string
	dyn       dynamic.Interface
	core      rest.Interface
	shared    *shared
}

// shared is what copies made by InNamespace have in common.
type shared struct {
	opts       options
	cfg        *rest.Config
	inCluster  bool
	kubeconfig string
	token      tokenSource
	mu         sync.Mutex
	gw         *gatewayConn
	disc       *discovered
	closed     bool
}

// InCluster reports whether the program runs in a pod that can use [NewInCluster]: the
// Kubernetes service environment variables are set and a ServiceAccount token is mounted.
func InCluster() bool {
	if os.Getenv("KUBERNETES_SERVICE_HOST") == "" || os.Getenv("KUBERNETES_SERVICE_PORT") == "" {
		return false
	}
	_, err := os.Stat(inClusterTokenFile)
	return err == nil
}

// NewInCluster returns a client for code running in a pod: the pod's ServiceAccount token (for
// the Kubernetes API and the gateway), its namespace, and the gateway at
// https://<service>.<namespace>.svc, verified with the CA the chart publishes (or a mounted
// bundle: [WithCAFile]). The gateway Service is looked up now, so a missing gateway or right is
// reported here.
func NewInCluster(ctx context.Context, opts ...Option) (*Client, error) {
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return nil, &Error{Code: CodeInvalidArgument, Op: "in-cluster config", Message: err.Error(), Err: err,
			Hint: "NewInCluster works in a pod with a ServiceAccount token; outside a cluster use NewFromKubeconfig"}
	}
	o := applyOptions(opts)
	if o.namespace == "" {
		if b, err := os.ReadFile(inClusterNamespaceFile); err == nil {
			o.namespace = strings.TrimSpace(string(b))
		}
	}
	if o.namespace == "" {
		o.namespace = "default"
	}
	return newClient(ctx, cfg, o, true, "")
}

// NewFromKubeconfig returns a client with the credentials of a kubeconfig: the file at path, or
// with an empty path the usual rules ($KUBECONFIG, else ~/.kube/config), and its current context
// (or [WithKubeContext]). Runs live in the context's namespace unless [WithNamespace] says
// otherwise. The gateway is discovered now (its Service, by label, and the chart's CA) and
// reached at the first call: directly at a gateway pod's IP when one answers, else through a
// `kubectl port-forward` the client opens and [Client.Close] ends; or at [WithGatewayURL]. The
// gateway is sent the kubeconfig user's bearer token (or [WithToken]'s): a user that
// authenticates with a client certificate has none to send.
func NewFromKubeconfig(ctx context.Context, path string, opts ...Option) (*Client, error) {
	o := applyOptions(opts)
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if path != "" {
		rules.ExplicitPath = path
	}
	overrides := &clientcmd.ConfigOverrides{}
	if o.kubeContext != "" {
		overrides.CurrentContext = o.kubeContext
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, &Error{Code: CodeInvalidArgument, Op: "load kubeconfig", Message: err.Error(), Err: err,
			Hint: "pass the path of a kubeconfig, or set $KUBECONFIG"}
	}
	if o.namespace == "" {
		if ns, _, err := cc.Namespace(); err == nil {
			o.namespace = ns
		}
	}
	if o.namespace == "" {
		o.namespace = "default"
	}
	return newClient(ctx, cfg, o, false, path)
}

// NewFromRESTConfig returns a client for an existing client-go configuration (outside a
// cluster: as [NewFromKubeconfig] with that configuration; port-forwards then use kubectl's own
// default kubeconfig). [WithNamespace] sets the namespace (default "default").
func NewFromRESTConfig(ctx context.Context, cfg *rest.Config, opts ...Option) (*Client, error) {
	o := applyOptions(opts)
	if o.namespace == "" {
		o.namespace = "default"
	}
	return newClient(ctx, rest.CopyConfig(cfg), o, false, "")
}

// applyOptions applies opts over the defaults; the gateway settings not given come from the
// environment variables krt reads (KRT_GATEWAY, KRT_GATEWAY_NAMESPACE, KRT_KUBECTL).
func applyOptions(opts []Option) options {
	o := options{via: ViaAuto, dialTimeout: 1500 * time.Millisecond}
	for _, f := range opts {
		f(&o)
	}
	o.gatewayURL = firstNonEmpty(o.gatewayURL, os.Getenv("KRT_GATEWAY"))
	o.gatewayNamespace = firstNonEmpty(o.gatewayNamespace, os.Getenv("KRT_GATEWAY_NAMESPACE"), DefaultGatewayNamespace)
	o.kubectl = firstNonEmpty(o.kubectl, os.Getenv("KRT_KUBECTL"), "kubectl")
	if o.via == "" {
		o.via = ViaAuto
	}
	if o.dialTimeout <= 0 {
		o.dialTimeout = 1500 * time.Millisecond
	}
	return o
}

func newClient(ctx context.Context, cfg *rest.Config, o options, inCluster bool, kubeconfig string) (*Client, error) {
	switch o.via {
	case ViaAuto, ViaService, ViaDirect, ViaPortForward:
	default:
		return nil, &Error{Code: CodeInvalidArgument, Op: "configure", Message: fmt.Sprintf("unknown Via %q", o.via),
			Hint: "use ViaAuto, ViaService, ViaDirect or ViaPortForward"}
	}
	if o.userAgent != "" {
		cfg.UserAgent = o.userAgent
	} else if cfg.UserAgent == "" {
		cfg.UserAgent = "kruntimes-go"
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, &Error{Code: CodeInvalidArgument, Op: "configure", Message: err.Error(), Err: err}
	}
	core, err := coreClient(cfg)
	if err != nil {
		return nil, &Error{Code: CodeInvalidArgument, Op: "configure", Message: err.Error(), Err: err}
	}
	sh := &shared{opts: o, cfg: cfg, inCluster: inCluster, kubeconfig: kubeconfig}
	sh.token, err = newTokenSource(cfg, o)
	if err != nil {
		return nil, err
	}
	c := &Client{namespace: o.namespace, dyn: dyn, core: core, shared: sh}
	if o.gatewayURL == "" {
		// Discovered now so a missing gateway or right is reported at construction; the route
		// (direct, port-forward) is chosen at the first gateway call.
		d, err := discoverGateway(ctx, dyn, o.gatewayNamespace)
		if err != nil {
			return nil, err
		}
		sh.disc = d
	}
	return c, nil
}

// coreClient is a REST client of the core API group, for pod logs.
func coreClient(cfg *rest.Config) (*rest.RESTClient, error) {
	c := rest.CopyConfig(cfg)
	scheme := runtime.NewScheme()
	gv := schema.GroupVersion{Version: "v1"}
	metav1.AddToGroupVersion(scheme, gv)
	c.GroupVersion = &gv
	c.APIPath = "/api"
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	return rest.RESTClientFor(c)
}

// Namespace is the namespace of the client's Runs.
func (c *Client) Namespace() string { return c.namespace }

// InNamespace returns a client for Runs in namespace ns that shares c's connections (closing
// either closes both).
func (c *Client) InNamespace(ns string) *Client {
	out := *c
	out.namespace = ns
	return &out
}

// RESTConfig returns a copy of the Kubernetes client configuration the client uses.
func (c *Client) RESTConfig() *rest.Config { return rest.CopyConfig(c.shared.cfg) }

// Close stops the port-forward the client opened, if any, and closes idle gateway connections.
// The client must not be used afterwards.
func (c *Client) Close() error {
	sh := c.shared
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.closed = true
	if sh.gw != nil {
		sh.gw.close()
		sh.gw = nil
	}
	return nil
}

// GatewayVia says how the client reaches the gateway ("direct 127.1.0.10:8443",
// "port-forward pod/…", "service https://…", "url https://…"), connecting first if it has
// not yet.
func (c *Client) GatewayVia(ctx context.Context) (string, error) {
	gw, err := c.gateway(ctx, target{op: "connect to the gateway"})
	if err != nil {
		return "", err
	}
	return gw.via, nil
}

// authTransport puts the bearer token (and the User-Agent) on every gateway request.
func authTransport(base http.RoundTripper, ts tokenSource, ua string) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		tok, err := ts.token()
		if err != nil {
			return nil, err
		}
		r := req.Clone(req.Context())
		if tok != "" {
			r.Header.Set("Authorization", "Bearer "+tok)
		}
		if ua != "" {
			r.Header.Set("User-Agent", ua)
		}
		return base.RoundTrip(r)
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
