package kruntimes

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
)

// How a client finds the gateway (the same rules as krt/gateway/locate.ts).
const (
	// GatewayLabel selects the gateway Service in its namespace.
	GatewayLabel = "app.kubernetes.io/name=kruntimes-gateway"
	// CAAnnotation on the gateway Service names the ConfigMap (key ca.crt) with the CA that
	// signed the gateway's certificate.
	CAAnnotation = "kruntimes.io/ca-configmap"
)

var (
	servicesGVR       = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	configMapsGVR     = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	podsGVR           = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	endpointSlicesGVR = schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
)

// The few fields discovery reads, decoded from unstructured objects so the package needs no
// typed Kubernetes API packages.
type service struct {
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector map[string]string `json:"selector,omitempty"`
		Ports    []struct {
			Name       string             `json:"name,omitempty"`
			Port       int32              `json:"port"`
			TargetPort intstr.IntOrString `json:"targetPort,omitempty"`
		} `json:"ports,omitempty"`
	} `json:"spec"`
}

type pod struct {
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Containers []struct {
			Name  string `json:"name"`
			Ports []struct {
				Name          string `json:"name,omitempty"`
				ContainerPort int32  `json:"containerPort"`
			} `json:"ports,omitempty"`
		} `json:"containers"`
	} `json:"spec"`
	Status struct {
		PodIP      string `json:"podIP,omitempty"`
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions,omitempty"`
	} `json:"status"`
}

type endpointSlice struct {
	Ports []struct {
		Name *string `json:"name,omitempty"`
		Port *int32  `json:"port,omitempty"`
	} `json:"ports,omitempty"`
	Endpoints []struct {
		Addresses  []string `json:"addresses"`
		Conditions struct {
			Ready       *bool `json:"ready,omitempty"`
			Terminating *bool `json:"terminating,omitempty"`
		} `json:"conditions"`
		TargetRef *struct {
			Kind string `json:"kind,omitempty"`
			Name string `json:"name,omitempty"`
		} `json:"targetRef,omitempty"`
	} `json:"endpoints"`
}

// endpoint is one gateway pod's address.
type endpoint struct {
	address string
	port    int32
	pod     string
}

func (e endpoint) hostPort() string { return net.JoinHostPort(e.address, strconv.Itoa(int(e.port))) }

// discovered is the gateway Service's scheme, CA and pods, read from the cluster.
type discovered struct {
	namespace, service string
	// scheme is "https" when the Service has an https port, else "http".
	scheme string
	// serverName is the Service's DNS name, which the certificate is verified against.
	serverName string
	// servicePort is the Service's port for scheme.
	servicePort int32
	// ca is the chart's CA (PEM), when the Service's annotation names a ConfigMap.
	ca        []byte
	endpoints []endpoint
	svc       *service
}

func fromUnstructured(u map[string]any, out any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u, out)
}

// discoverGateway reads the gateway Service (by label), its CA ConfigMap and its ready
// endpoints: the EndpointSlices', else the ready pods the Service selects (EndpointSlices cannot
// hold loopback addresses, so on a local cluster they stay empty).
func discoverGateway(ctx context.Context, dyn dynamic.Interface, ns string) (*discovered, error) {
	t := target{op: "find the gateway", namespace: ns}
	list, err := dyn.Resource(servicesGVR).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: GatewayLabel})
	if err != nil {
		return nil, discoveryError(err, t, "list services")
	}
	if len(list.Items) == 0 {
		e := t.err(CodeNotFound, fmt.Sprintf("no gateway Service (label %s) in namespace %q", GatewayLabel, ns))
		e.Hint = "install the chart with gateway.enabled=true, pass WithGatewayNamespace(<namespace of the release>), or WithGatewayURL"
		return nil, e
	}
	if len(list.Items) > 1 {
		names := make([]string, len(list.Items))
		for i, s := range list.Items {
			names[i] = s.GetName()
		}
		e := t.err(CodeInvalidArgument, fmt.Sprintf("%d gateway Services in namespace %q: %s", len(names), ns, strings.Join(names, ", ")))
		e.Hint = "pick one with WithGatewayURL(\"https://<service>.<namespace>.svc\")"
		return nil, e
	}
	var svc service
	if err := fromUnstructured(list.Items[0].Object, &svc); err != nil {
		return nil, &Error{Code: CodeInternal, Op: t.op, Message: err.Error(), Err: err}
	}
	d := &discovered{namespace: ns, service: svc.Name, scheme: "http", serverName: svc.Name + "." + ns + ".svc", svc: &svc}
	for _, p := range svc.Spec.Ports {
		if p.Name == "https" {
			d.scheme = "https"
		}
	}
	for _, p := range svc.Spec.Ports {
		if p.Name == d.scheme {
			d.servicePort = p.Port
		}
	}
	if cm := svc.Annotations[CAAnnotation]; d.scheme == "https" && cm != "" {
		u, err := dyn.Resource(configMapsGVR).Namespace(ns).Get(ctx, cm, metav1.GetOptions{})
		if err != nil {
			return nil, discoveryError(err, t, fmt.Sprintf("get configmap %q", cm))
		}
		if ca, ok, _ := unstructured.NestedString(u.Object, "data", "ca.crt"); ok {
			d.ca = []byte(ca)
		}
	}
	if d.endpoints, err = gatewayEndpoints(ctx, dyn, d); err != nil {
		return nil, err
	}
	return d, nil
}

// gatewayEndpoints lists the gateway's ready endpoints now (again, when the known ones fail).
func gatewayEndpoints(ctx context.Context, dyn dynamic.Interface, d *discovered) ([]endpoint, error) {
	t := target{op: "find the gateway", namespace: d.namespace}
	list, err := dyn.Resource(endpointSlicesGVR).Namespace(d.namespace).List(ctx,
		metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + d.service})
	if err != nil {
		return nil, discoveryError(err, t, "list endpointslices")
	}
	slices := make([]endpointSlice, 0, len(list.Items))
	for _, u := range list.Items {
		var s endpointSlice
		if err := fromUnstructured(u.Object, &s); err == nil {
			slices = append(slices, s)
		}
	}
	if eps := sliceEndpoints(slices, d.scheme); len(eps) > 0 {
		return eps, nil
	}
	sel := selectorString(d.svc.Spec.Selector)
	if sel == "" {
		return nil, nil
	}
	pl, err := dyn.Resource(podsGVR).Namespace(d.namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		// Without list on pods the slices' answer (no ready pod) stands.
		return nil, nil
	}
	pods := make([]pod, 0, len(pl.Items))
	for _, u := range pl.Items {
		var p pod
		if err := fromUnstructured(u.Object, &p); err == nil {
			pods = append(pods, p)
		}
	}
	return podEndpoints(d.svc, pods, d.scheme), nil
}

// sliceEndpoints are the ready, not terminating addresses of the slices' port named scheme.
func sliceEndpoints(slices []endpointSlice, scheme string) []endpoint {
	var out []endpoint
	for _, s := range slices {
		var port int32
		for _, p := range s.Ports {
			if p.Name != nil && *p.Name == scheme && p.Port != nil {
				port = *p.Port
			}
		}
		if port == 0 {
			continue
		}
		for _, e := range s.Endpoints {
			if (e.Conditions.Ready != nil && !*e.Conditions.Ready) || (e.Conditions.Terminating != nil && *e.Conditions.Terminating) {
				continue
			}
			if len(e.Addresses) == 0 {
				continue
			}
			ep := endpoint{address: e.Addresses[0], port: port}
			if e.TargetRef != nil && e.TargetRef.Kind == "Pod" {
				ep.pod = e.TargetRef.Name
			}
			out = append(out, ep)
		}
	}
	return out
}

// podEndpoints are the ready pods' IPs with the Service's target port for scheme (a number, or
// a container port name).
func podEndpoints(svc *service, pods []pod, scheme string) []endpoint {
	var target *intstr.IntOrString
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Name == scheme {
			target = &svc.Spec.Ports[i].TargetPort
		}
	}
	if target == nil {
		return nil
	}
	var out []endpoint
	for _, p := range pods {
		ready := false
		for _, c := range p.Status.Conditions {
			if c.Type == "Ready" && c.Status == "True" {
				ready = true
			}
		}
		if !ready || p.Status.PodIP == "" || p.DeletionTimestamp != nil {
			continue
		}
		port := int32(0)
		if target.Type == intstr.Int {
			port = target.IntVal
		} else {
			for _, c := range p.Spec.Containers {
				for _, cp := range c.Ports {
					if cp.Name == target.StrVal {
						port = cp.ContainerPort
					}
				}
			}
		}
		if port > 0 {
			out = append(out, endpoint{address: p.Status.PodIP, port: port, pod: p.Name})
		}
	}
	return out
}

func selectorString(sel map[string]string) string {
	return metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: sel})
}

// discoveryError says which right discovery lacks: the chart grants it to every authenticated user.
func discoveryError(err error, t target, what string) error {
	e := kubeError(err, t, "", "")
	if ke, ok := e.(*Error); ok {
		switch ke.Code {
		case CodePermissionDenied:
			ke.Message = fmt.Sprintf("you may not %s in namespace %q: %s", what, t.namespace, ke.Message)
			ke.Hint = "the chart's gateway.discovery Role grants it to every authenticated user; or pass WithGatewayURL"
		case CodeNotFound:
			ke.Message = fmt.Sprintf("%s in namespace %q: %s", what, t.namespace, ke.Message)
		}
	}
	return e
}

// firstDialable returns the first endpoint a TCP connection opens to, trying all at once:
// outside the pod network an attempt may hang until the timeout, so one after another would
// add up.
func firstDialable(ctx context.Context, eps []endpoint, timeout time.Duration) (endpoint, bool) {
	if len(eps) == 0 {
		return endpoint{}, false
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	found := make(chan int, len(eps))
	for i, ep := range eps {
		go func() {
			var d net.Dialer
			conn, err := d.DialContext(ctx, "tcp", ep.hostPort())
			if err != nil {
				found <- -1
				return
			}
			_ = conn.Close()
			found <- i
		}()
	}
	for range eps {
		if i := <-found; i >= 0 {
			return eps[i], true
		}
	}
	return endpoint{}, false
}
