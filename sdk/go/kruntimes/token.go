package kruntimes

import (
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// tokenSource gives the bearer token for the gateway, and optionally wraps the transport (for
// kubeconfig exec and auth-provider plugins, which add their token to requests themselves).
type tokenSource interface {
	token() (string, error)
	wrap(http.RoundTripper) http.RoundTripper
}

// newTokenSource picks the gateway's token: WithToken, WithTokenFile, else the configuration's
// token, token file, or exec/auth-provider plugin. A configuration without any (client
// certificates) is reported at the first gateway call, so task-only use still works.
func newTokenSource(cfg *rest.Config, o options) (tokenSource, error) {
	switch {
	case o.token != "":
		return staticToken(o.token), nil
	case o.tokenFile != "":
		return &fileToken{path: o.tokenFile}, nil
	case cfg.BearerToken != "":
		return staticToken(cfg.BearerToken), nil
	case cfg.BearerTokenFile != "":
		return &fileToken{path: cfg.BearerTokenFile}, nil
	case cfg.ExecProvider != nil || cfg.AuthProvider != nil:
		tc, err := cfg.TransportConfig()
		if err != nil {
			return nil, &Error{Code: CodeInvalidArgument, Op: "configure", Message: err.Error(), Err: err}
		}
		return pluginToken{wrapper: tc.WrapTransport}, nil
	}
	msg := "your kubeconfig user has no bearer token to send to the gateway"
	if cfg.CertFile != "" || len(cfg.CertData) > 0 {
		msg = "your kubeconfig user authenticates with a client certificate; the gateway checks bearer tokens only (TokenReview), so there is nothing to send"
	}
	return noToken(msg), nil
}

type staticToken string

func (t staticToken) token() (string, error)                    { return string(t), nil }
func (staticToken) wrap(rt http.RoundTripper) http.RoundTripper { return rt }

// fileToken re-reads its file at most every 10 s: projected tokens are rotated in place.
type fileToken struct {
	path string
	mu   sync.Mutex
	tok  string
	read time.Time
}

func (f *fileToken) token() (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tok != "" && time.Since(f.read) < 10*time.Second {
		return f.tok, nil
	}
	b, err := os.ReadFile(f.path)
	if err != nil {
		if f.tok != "" {
			return f.tok, nil
		}
		return "", &Error{Code: CodeUnauthenticated, Op: "read token", Message: err.Error(), Err: err,
			Hint: "the token file must be readable (WithTokenFile, or the kubeconfig's tokenFile)"}
	}
	f.tok, f.read = strings.TrimSpace(string(b)), time.Now()
	return f.tok, nil
}

func (*fileToken) wrap(rt http.RoundTripper) http.RoundTripper { return rt }

// pluginToken lets the kubeconfig's plugin set Authorization on each request.
type pluginToken struct {
	wrapper func(http.RoundTripper) http.RoundTripper
}

func (pluginToken) token() (string, error) { return "", nil }

func (p pluginToken) wrap(rt http.RoundTripper) http.RoundTripper {
	if p.wrapper == nil {
		return rt
	}
	return p.wrapper(rt)
}

type noToken string

func (n noToken) token() (string, error) {
	return "", &Error{Code: CodeUnauthenticated, Op: "call the gateway", Message: string(n),
		Hint: "pass one with WithToken (e.g. from `kubectl create token <serviceaccount>` for a ServiceAccount allowed to create runs/invoke or runs/session), or use a kubeconfig context with a token"}
}

func (noToken) wrap(rt http.RoundTripper) http.RoundTripper { return rt }
