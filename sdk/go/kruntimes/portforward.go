package kruntimes

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// forwardingRE is kubectl's line once the forward listens.
var forwardingRE = regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+) -> \d+`)

// portForwardTimeout bounds how long kubectl may take to report the forward.
const portForwardTimeout = 15 * time.Second

// portForward is `kubectl port-forward` to one gateway pod on a free local port, started at the
// first gateway call and again when kubectl has exited (a pod gone), stopped by Client.Close.
type portForward struct {
	bin, kubeconfig, context, namespace string
	// pick chooses the pod to forward to (listing the gateway's endpoints again).
	pick func(context.Context) (endpoint, error)

	mu        sync.Mutex
	cmd       *exec.Cmd
	exited    chan struct{}
	localPort int
	pod       string
	closed    bool
}

// portForwardArgs are kubectl's arguments: the kubeconfig and context the client uses.
func portForwardArgs(namespace, pod string, port int32, kubeconfig, kubeContext string) []string {
	args := []string{"port-forward", "-n", namespace, "pod/" + pod, ":" + strconv.Itoa(int(port)), "--address", "127.0.0.1"}
	if kubeconfig != "" {
		args = append(args, "--kubeconfig", kubeconfig)
	}
	if kubeContext != "" {
		args = append(args, "--context", kubeContext)
	}
	return args
}

// start runs kubectl and waits for its "Forwarding from" line. Call with p.mu held or before
// the forward is shared.
func (p *portForward) start(ctx context.Context) error {
	t := target{op: "port-forward to the gateway", namespace: p.namespace}
	ep, err := p.pick(ctx)
	if err != nil {
		return err
	}
	// Not bound to ctx: the forward outlives the call that opened it.
	cmd := exec.Command(p.bin, portForwardArgs(p.namespace, ep.pod, ep.port, p.kubeconfig, p.context)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return t.err(CodeInternal, err.Error())
	}
	stderr := &boundedBuffer{max: 4096}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		e := t.err(CodeUnavailable, fmt.Sprintf("cannot reach the gateway pods directly, and cannot run %q for a port-forward: %v", p.bin, err))
		e.Hint = "install kubectl (or name it with WithKubectl), or pass WithGatewayURL of an Ingress, LoadBalancer or your own port-forward"
		e.Err = err
		return e
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	ports := make(chan int, 1)
	go func() {
		r := bufio.NewReader(stdout)
		found := false
		for {
			line, err := r.ReadString('\n')
			if !found {
				if m := forwardingRE.FindStringSubmatch(line); m != nil {
					n, _ := strconv.Atoi(m[1])
					ports <- n
					found = true
				}
			}
			// Keep draining kubectl's output so it never blocks on a full pipe.
			if err != nil {
				if !found {
					close(ports)
				}
				return
			}
		}
	}()
	timer := time.NewTimer(portForwardTimeout)
	defer timer.Stop()
	fail := func(why string) error {
		_ = cmd.Process.Kill()
		<-exited
		msg := fmt.Sprintf("kubectl port-forward to pod %s/%s %s", p.namespace, ep.pod, why)
		if s := strings.TrimSpace(stderr.String()); s != "" {
			msg += ": " + s
		}
		e := t.err(CodeUnavailable, msg)
		e.Hint = "it needs create on pods/portforward; or pass WithGatewayURL"
		return e
	}
	select {
	case port, ok := <-ports:
		if !ok {
			return fail("ended before it listened")
		}
		p.cmd, p.exited, p.localPort, p.pod = cmd, exited, port, ep.pod
		return nil
	case <-timer.C:
		return fail(fmt.Sprintf("did not listen within %s", portForwardTimeout))
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-exited
		return contextError(t, ctx.Err(), "")
	}
}

// dial connects to the forward's local port, restarting kubectl once if it has exited.
func (p *portForward) dial(ctx context.Context, network, _ string) (net.Conn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, fmt.Errorf("the client is closed")
	}
	if p.gone() {
		if err := p.start(ctx); err != nil {
			return nil, err
		}
	}
	var d net.Dialer
	return d.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", strconv.Itoa(p.localPort)))
}

func (p *portForward) gone() bool {
	if p.exited == nil {
		return true
	}
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// close stops kubectl and waits for it to exit.
func (p *portForward) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.cmd != nil && !p.gone() {
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// boundedBuffer keeps the first max bytes written to it (kubectl's error message).
type boundedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *boundedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var _ io.Writer = (*boundedBuffer)(nil)
