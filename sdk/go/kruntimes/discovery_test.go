package kruntimes

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

func decode[T any](t *testing.T, js string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(js), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

const gatewayService = `{"metadata":{"name":"kruntimes-gateway","annotations":{"kruntimes.io/ca-configmap":"kruntimes-gateway-ca"}},
 "spec":{"selector":{"app.kubernetes.io/name":"kruntimes-gateway","app.kubernetes.io/instance":"kruntimes"},
  "ports":[{"name":"https","port":443,"targetPort":"https"},{"name":"metrics","port":9090,"targetPort":"metrics"}]}}`

// Ready, not terminating slice entries of the scheme's port, first address each, with the pod.
func TestSliceEndpoints(t *testing.T) {
	slices := []endpointSlice{
		decode[endpointSlice](t, `{"ports":[{"name":"metrics","port":9090},{"name":"https","port":8443}],"endpoints":[
			{"addresses":["10.0.0.7","fd00::7"],"conditions":{"ready":true},"targetRef":{"kind":"Pod","name":"gw-a"}},
			{"addresses":["10.0.0.8"],"conditions":{"ready":false},"targetRef":{"kind":"Pod","name":"gw-b"}},
			{"addresses":["10.0.0.9"],"conditions":{"ready":true,"terminating":true},"targetRef":{"kind":"Pod","name":"gw-c"}},
			{"addresses":["10.0.0.10"],"conditions":{}}]}`),
		decode[endpointSlice](t, `{"ports":[{"name":"http","port":8080}],"endpoints":[{"addresses":["10.0.0.11"],"conditions":{"ready":true}}]}`),
	}
	got := sliceEndpoints(slices, "https")
	want := []endpoint{{address: "10.0.0.7", port: 8443, pod: "gw-a"}, {address: "10.0.0.10", port: 8443}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if eps := sliceEndpoints(slices, "grpc"); len(eps) != 0 {
		t.Fatalf("no such port: %+v", eps)
	}
}

// Without slices (loopback pod IPs), the ready pods the Service selects, with the named port.
func TestPodEndpoints(t *testing.T) {
	svc := decode[service](t, gatewayService)
	mkPod := func(name, ip, ready string, deleting bool) pod {
		del := ""
		if deleting {
			del = `,"deletionTimestamp":"2026-12-03T06:00:00Z"`
		}
		return decode[pod](t, `{"metadata":{"name":"`+name+`"`+del+`},
			"spec":{"containers":[{"name":"gateway","ports":[{"name":"https","containerPort":8443},{"name":"metrics","containerPort":9090}]}]},
			"status":{"podIP":"`+ip+`","conditions":[{"type":"Ready","status":"`+ready+`"}]}}`)
	}
	pods := []pod{mkPod("gw-a", "127.1.0.10", "True", false), mkPod("gw-b", "127.1.0.11", "False", false), mkPod("gw-c", "127.1.0.12", "True", true), mkPod("gw-d", "", "True", false)}
	got := podEndpoints(&svc, pods, "https")
	want := []endpoint{{address: "127.1.0.10", port: 8443, pod: "gw-a"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	numeric := decode[service](t, `{"metadata":{"name":"gw"},"spec":{"ports":[{"name":"http","port":80,"targetPort":8080}]}}`)
	if got := podEndpoints(&numeric, pods[:1], "http"); len(got) != 1 || got[0].port != 8080 {
		t.Fatalf("numeric targetPort: %+v", got)
	}
	if got := podEndpoints(&svc, pods, "http"); got != nil {
		t.Fatalf("no http port: %+v", got)
	}
	if s := selectorString(svc.Spec.Selector); s != "app.kubernetes.io/instance=kruntimes,app.kubernetes.io/name=kruntimes-gateway" {
		t.Fatalf("selector %q", s)
	}
}

func TestPlanRoute(t *testing.T) {
	cases := []struct {
		o         options
		inCluster bool
		want      route
	}{
		{options{via: ViaAuto, gatewayURL: "https://gw.example"}, false, routeURL},
		{options{via: ViaPortForward, gatewayURL: "https://gw.example"}, true, routeURL},
		{options{via: ViaAuto}, true, routeService},
		{options{via: ViaAuto}, false, routeAuto},
		{options{via: ViaService}, false, routeService},
		{options{via: ViaDirect}, true, routeDirect},
		{options{via: ViaPortForward}, false, routePortForward},
	}
	for _, c := range cases {
		if got := planRoute(c.o, c.inCluster); got != c.want {
			t.Errorf("%+v in cluster %v: got %v, want %v", c.o, c.inCluster, got, c.want)
		}
	}
}

// All endpoints are tried at once; the one that accepts wins, even behind one that hangs.
func TestFirstDialable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	open := endpoint{address: "127.0.0.1", port: int32(ln.Addr().(*net.TCPAddr).Port), pod: "gw-open"}
	closedLn, _ := net.Listen("tcp", "127.0.0.1:0")
	closedPort := int32(closedLn.Addr().(*net.TCPAddr).Port)
	closedLn.Close()
	closed := endpoint{address: "127.0.0.1", port: closedPort, pod: "gw-closed"}
	// A TEST-NET-1 address: never routed, so the attempt hangs until the timeout.
	hanging := endpoint{address: "192.0.2.1", port: 443, pod: "gw-far"}
	start := time.Now()
	got, ok := firstDialable(context.Background(), []endpoint{hanging, closed, open}, 2*time.Second)
	if !ok || got != open {
		t.Fatalf("got %+v %v", got, ok)
	}
	if time.Since(start) > time.Second {
		t.Fatalf("waited %s behind the hanging endpoint", time.Since(start))
	}
	if _, ok := firstDialable(context.Background(), []endpoint{closed}, time.Second); ok {
		t.Fatal("a closed port is not dialable")
	}
	if _, ok := firstDialable(context.Background(), nil, time.Second); ok {
		t.Fatal("no endpoints")
	}
	if hp := (endpoint{address: "fd00::1", port: 8443}).hostPort(); hp != "[fd00::1]:8443" {
		t.Fatalf("IPv6 host:port %q", hp)
	}
}

// The direct dialer moves on to the next pod, and lists the endpoints again when all fail.
func TestDirectDialerFailover(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	live := endpoint{address: "127.0.0.1", port: int32(ln.Addr().(*net.TCPAddr).Port)}
	deadLn, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := endpoint{address: "127.0.0.1", port: int32(deadLn.Addr().(*net.TCPAddr).Port)}
	deadLn.Close()
	refreshed := 0
	d := &directDialer{eps: []endpoint{dead, live}, timeout: time.Second, refresh: func(context.Context) ([]endpoint, error) {
		refreshed++
		return []endpoint{live}, nil
	}}
	c, err := d.dial(context.Background(), "tcp", "ignored:443")
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if d.eps[0] != live || refreshed != 0 {
		t.Fatalf("the live endpoint should come first now: %+v (refreshed %d)", d.eps, refreshed)
	}
	d.eps = []endpoint{dead}
	c, err = d.dial(context.Background(), "tcp", "ignored:443")
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if refreshed != 1 {
		t.Fatalf("refreshed %d times, want 1", refreshed)
	}
}

func TestPortForwardArgs(t *testing.T) {
	got := portForwardArgs("kruntimes", "gw-a", 8443, "/tmp/kc", "prod")
	want := []string{"port-forward", "-n", "kruntimes", "pod/gw-a", ":8443", "--address", "127.0.0.1", "--kubeconfig", "/tmp/kc", "--context", "prod"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q", got)
	}
	if got := portForwardArgs("ns", "p", 80, "", ""); len(got) != 7 {
		t.Fatalf("without kubeconfig and context: %q", got)
	}
	if m := forwardingRE.FindStringSubmatch("Forwarding from 127.0.0.1:40123 -> 8443\n"); m == nil || m[1] != "40123" {
		t.Fatalf("forwarding line: %q", m)
	}
}

// The port-forward runs kubectl (here this test binary standing in for it), reads the local
// port from its output, relays connections, and stops it on close.
func TestPortForwardProcess(t *testing.T) {
	upstream, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer upstream.Close()
	go func() {
		for {
			c, err := upstream.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("hello through the forward\n"))
			c.Close()
		}
	}()
	argsFile := t.TempDir() + "/args.json"
	pf := &portForward{
		bin: shimKubectl(t, upstream.Addr().String(), argsFile, false), kubeconfig: "/tmp/some.kubeconfig", namespace: "kruntimes",
		pick: func(context.Context) (endpoint, error) {
			return endpoint{address: "10.0.0.7", port: 8443, pod: "gw-a"}, nil
		},
	}
	if err := pf.start(context.Background()); err != nil {
		t.Fatal(err)
	}
	conn, err := pf.dial(context.Background(), "tcp", "ignored:443")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := conn.Read(buf)
	conn.Close()
	if got := string(buf[:n]); got != "hello through the forward\n" {
		t.Fatalf("relayed %q", got)
	}
	rec := decode[struct {
		Args []string `json:"args"`
		PID  int      `json:"pid"`
	}](t, string(must(os.ReadFile(argsFile))))
	if strings.Join(rec.Args, " ") != "port-forward -n kruntimes pod/gw-a :8443 --address 127.0.0.1 --kubeconfig /tmp/some.kubeconfig" {
		t.Fatalf("kubectl args %q", rec.Args)
	}
	pf.close()
	if !pf.gone() {
		t.Fatal("kubectl still runs after close")
	}
	if _, err := pf.dial(context.Background(), "tcp", "x:1"); err == nil {
		t.Fatal("dial after close")
	}
}

func TestPortForwardFailure(t *testing.T) {
	pf := &portForward{
		bin: shimKubectl(t, "127.0.0.1:1", "", true), namespace: "kruntimes",
		pick: func(context.Context) (endpoint, error) {
			return endpoint{address: "10.0.0.7", port: 8443, pod: "gw-a"}, nil
		},
	}
	err := pf.start(context.Background())
	e := asError(t, err)
	if e.Code != CodeUnavailable || !strings.Contains(e.Message, "pods/portforward") || !strings.Contains(e.Hint, "WithGatewayURL") {
		t.Fatalf("got %v", err)
	}
	missing := &portForward{bin: "/nonexistent/kubectl", namespace: "k", pick: pf.pick}
	if err := missing.start(context.Background()); !strings.Contains(err.Error(), "cannot run") {
		t.Fatalf("missing kubectl: %v", err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
