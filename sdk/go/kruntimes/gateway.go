package kruntimes

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"

	"github.com/kruntimes/kruntimes/sdk/go/gen/kruntimes/gateway/v1/gatewayv1connect"
)

// gatewayConn is the client's connection to the gateway, made at the first gateway call.
type gatewayConn struct {
	via       string
	functions gatewayv1connect.FunctionServiceClient
	sessions  gatewayv1connect.SessionServiceClient
	transport *http.Transport
	pf        *portForward
}

func (g *gatewayConn) close() {
	g.transport.CloseIdleConnections()
	if g.pf != nil {
		g.pf.close()
	}
}

// route is how the gateway is reached.
type route int

const (
	routeURL route = iota
	routeService
	routeDirect
	routePortForward
	// routeAuto: direct when a gateway pod answers, else port-forward.
	routeAuto
)

// planRoute chooses the route from the options: a URL as given; in a cluster the Service's DNS
// name; outside, what Via says (auto: direct, else port-forward).
func planRoute(o options, inCluster bool) route {
	switch {
	case o.gatewayURL != "":
		return routeURL
	case o.via == ViaService, o.via == ViaAuto && inCluster:
		return routeService
	case o.via == ViaDirect:
		return routeDirect
	case o.via == ViaPortForward:
		return routePortForward
	}
	return routeAuto
}

// gateway returns the client's gateway connection, connecting at the first call.
func (c *Client) gateway(ctx context.Context, t target) (*gatewayConn, error) {
	sh := c.shared
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.closed {
		return nil, t.err(CodeInvalidArgument, "the client is closed")
	}
	if sh.gw != nil {
		return sh.gw, nil
	}
	gw, err := c.connect(ctx, t)
	if err != nil {
		return nil, err
	}
	sh.gw = gw
	return gw, nil
}

func (c *Client) connect(ctx context.Context, t target) (*gatewayConn, error) {
	sh := c.shared
	o := sh.opts
	explicitCA, err := explicitCA(o)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{
		ForceAttemptHTTP2:   true,
		TLSHandshakeTimeout: 10 * time.Second,
		IdleConnTimeout:     90 * time.Second,
		MaxIdleConnsPerHost: 8,
		// Pings find a dead connection (a gateway pod gone, a port-forward ended) so the next
		// call dials again instead of waiting on it.
		HTTP2: &http.HTTP2Config{SendPingTimeout: 30 * time.Second, PingTimeout: 15 * time.Second},
	}
	gw := &gatewayConn{transport: tr}
	var baseURL string
	switch planRoute(o, sh.inCluster) {
	case routeURL:
		u, err := url.Parse(o.gatewayURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			e := t.err(CodeInvalidArgument, fmt.Sprintf("gateway URL %q is not an http:// or https:// URL", o.gatewayURL))
			e.Hint = "e.g. WithGatewayURL(\"https://kruntimes-gateway.kruntimes.svc\")"
			return nil, e
		}
		baseURL = strings.TrimSuffix(u.String(), "/")
		tr.Proxy = http.ProxyFromEnvironment
		if u.Scheme == "https" {
			roots, err := urlRoots(ctx, c, explicitCA)
			if err != nil {
				return nil, err
			}
			tr.TLSClientConfig = &tls.Config{RootCAs: roots, InsecureSkipVerify: o.insecure, MinVersion: tls.VersionTLS12}
		}
		gw.via = "url " + baseURL
	default:
		d := sh.disc
		tlsCfg, err := discoveredTLS(d, explicitCA, o.insecure)
		if err != nil {
			return nil, err
		}
		tr.TLSClientConfig = tlsCfg
		// The URL names the Service; for direct and port-forward routes the dialer decides
		// which address the connection really goes to, and TLS still verifies the Service name.
		baseURL = d.scheme + "://" + d.serverName
		if d.servicePort != 0 && d.servicePort != defaultPort(d.scheme) {
			baseURL += ":" + strconv.Itoa(int(d.servicePort))
		}
		if err := c.chooseDialer(ctx, t, d, gw); err != nil {
			return nil, err
		}
	}
	var rt http.RoundTripper = tr
	rt = sh.token.wrap(rt)
	httpClient := &http.Client{Transport: authTransport(rt, sh.token, o.userAgent)}
	opts := []connect.ClientOption{}
	if o.grpc {
		opts = append(opts, connect.WithGRPC())
	}
	gw.functions = gatewayv1connect.NewFunctionServiceClient(httpClient, baseURL, opts...)
	gw.sessions = gatewayv1connect.NewSessionServiceClient(httpClient, baseURL, opts...)
	return gw, nil
}

// chooseDialer sets how connections to a discovered gateway are made: the Service's DNS name,
// a gateway pod's IP, or a port-forward.
func (c *Client) chooseDialer(ctx context.Context, t target, d *discovered, gw *gatewayConn) error {
	sh := c.shared
	o := sh.opts
	r := planRoute(o, sh.inCluster)
	if r == routeService {
		gw.via = "service " + d.scheme + "://" + d.serverName
		return nil
	}
	eps := d.endpoints
	if r == routeDirect || r == routeAuto {
		// Fresh endpoints: the client may have been made a while ago.
		if fresh, err := gatewayEndpoints(ctx, c.dyn, d); err == nil && len(fresh) > 0 {
			eps = fresh
		}
	}
	if len(eps) == 0 {
		e := t.err(CodeUnavailable, fmt.Sprintf("the gateway Service %s/%s has no ready pod", d.namespace, d.service))
		e.Hint = fmt.Sprintf("check it with `kubectl -n %s get pods -l %s`", d.namespace, GatewayLabel)
		return e
	}
	if r != routePortForward {
		shuffled := append([]endpoint(nil), eps...)
		rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if ep, ok := firstDialable(ctx, shuffled, o.dialTimeout); ok {
			dd := &directDialer{timeout: o.dialTimeout, refresh: func(ctx context.Context) ([]endpoint, error) {
				return gatewayEndpoints(ctx, c.dyn, d)
			}}
			dd.eps = append([]endpoint{ep}, without(shuffled, ep)...)
			gw.transport.DialContext = dd.dial
			gw.via = "direct " + ep.hostPort()
			return nil
		}
		if r == routeDirect {
			addrs := make([]string, len(eps))
			for i, ep := range eps {
				addrs[i] = ep.hostPort()
			}
			e := t.err(CodeUnavailable, fmt.Sprintf("cannot connect to any gateway pod of %s/%s (%s)", d.namespace, d.service, strings.Join(addrs, ", ")))
			e.Hint = "outside the cluster's pod network use WithGatewayVia(ViaPortForward), or WithGatewayURL of an Ingress/LoadBalancer"
			return e
		}
	}
	pf := &portForward{
		bin: o.kubectl, kubeconfig: sh.kubeconfig, context: o.kubeContext, namespace: d.namespace,
		pick: func(ctx context.Context) (endpoint, error) {
			eps, err := gatewayEndpoints(ctx, c.dyn, d)
			if err != nil {
				return endpoint{}, err
			}
			for _, ep := range eps {
				if ep.pod != "" {
					return ep, nil
				}
			}
			return endpoint{}, t.err(CodeUnavailable, fmt.Sprintf("the gateway Service %s/%s has no ready pod to port-forward to", d.namespace, d.service))
		},
	}
	if err := pf.start(ctx); err != nil {
		return err
	}
	gw.pf = pf
	gw.transport.DialContext = pf.dial
	gw.via = "port-forward pod/" + pf.pod
	return nil
}

func defaultPort(scheme string) int32 {
	if scheme == "https" {
		return 443
	}
	return 80
}

func without(eps []endpoint, ep endpoint) []endpoint {
	out := make([]endpoint, 0, len(eps))
	for _, e := range eps {
		if e != ep {
			out = append(out, e)
		}
	}
	return out
}

func explicitCA(o options) ([]byte, error) {
	if len(o.ca) > 0 {
		return o.ca, nil
	}
	if o.caFile == "" {
		return nil, nil
	}
	b, err := os.ReadFile(o.caFile)
	if err != nil {
		return nil, &Error{Code: CodeInvalidArgument, Op: "read CA file", Message: err.Error(), Err: err}
	}
	return b, nil
}

func certPool(pem []byte, base *x509.CertPool) (*x509.CertPool, error) {
	pool := base
	if pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, &Error{Code: CodeInvalidArgument, Op: "load CA", Message: "no PEM certificate in the CA bundle"}
	}
	return pool, nil
}

// discoveredTLS verifies the Service's DNS name with the explicit CA, else the chart's, else
// the system's roots.
func discoveredTLS(d *discovered, explicit []byte, insecure bool) (*tls.Config, error) {
	if d.scheme != "https" {
		return nil, nil
	}
	cfg := &tls.Config{ServerName: d.serverName, InsecureSkipVerify: insecure, MinVersion: tls.VersionTLS12}
	ca := explicit
	if len(ca) == 0 {
		ca = d.ca
	}
	if len(ca) > 0 {
		pool, err := certPool(ca, nil)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// urlRoots are the roots for a given URL: the explicit CA alone, else the system's plus the
// chart's CA when it can be read (a port-forward or an in-cluster name is verified by it too).
func urlRoots(ctx context.Context, c *Client, explicit []byte) (*x509.CertPool, error) {
	if len(explicit) > 0 {
		return certPool(explicit, nil)
	}
	d := c.shared.disc
	if d == nil {
		d, _ = discoverGateway(ctx, c.dyn, c.shared.opts.gatewayNamespace)
	}
	if d == nil || len(d.ca) == 0 {
		return nil, nil
	}
	sys, err := x509.SystemCertPool()
	if err != nil || sys == nil {
		sys = x509.NewCertPool()
	}
	return certPool(d.ca, sys)
}

// directDialer connects to gateway pods by IP: the one that answered first, then the others;
// when all fail it lists the gateway's endpoints again (at most once a second).
type directDialer struct {
	mu          sync.Mutex
	eps         []endpoint
	timeout     time.Duration
	refresh     func(context.Context) ([]endpoint, error)
	lastRefresh time.Time
}

func (d *directDialer) dial(ctx context.Context, network, _ string) (net.Conn, error) {
	d.mu.Lock()
	eps := append([]endpoint(nil), d.eps...)
	d.mu.Unlock()
	conn, err := d.tryAll(ctx, network, eps)
	if err == nil {
		return conn, nil
	}
	d.mu.Lock()
	stale := time.Since(d.lastRefresh) > time.Second
	if stale {
		d.lastRefresh = time.Now()
	}
	d.mu.Unlock()
	if !stale {
		return nil, err
	}
	fresh, rerr := d.refresh(ctx)
	if rerr != nil || len(fresh) == 0 {
		return nil, err
	}
	d.mu.Lock()
	d.eps = fresh
	d.mu.Unlock()
	return d.tryAll(ctx, network, fresh)
}

func (d *directDialer) tryAll(ctx context.Context, network string, eps []endpoint) (net.Conn, error) {
	var last error
	for i, ep := range eps {
		nd := net.Dialer{Timeout: d.timeout}
		conn, err := nd.DialContext(ctx, network, ep.hostPort())
		if err == nil {
			if i > 0 {
				d.mu.Lock()
				d.eps = append([]endpoint{ep}, without(d.eps, ep)...)
				d.mu.Unlock()
			}
			return conn, nil
		}
		last = err
		if ctx.Err() != nil {
			break
		}
	}
	if last == nil {
		last = fmt.Errorf("no gateway pod to connect to")
	}
	return nil, last
}
