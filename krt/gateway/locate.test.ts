/**
 * Finding the gateway: the Service by label, its scheme and CA ConfigMap, ready endpoints from
 * its EndpointSlices (or its pods when the slices hold none), the first address that accepts a
 * connection, and the errors that say which right or object is missing. The apiserver is a fake
 * answering the few reads discovery makes; the connections are real.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type KubeClient, KubeError } from "@kruntimes/kube";
import { CliError } from "../errors.ts";
import { ExitCode } from "../exit-codes.ts";
import { discoverGateway, type LocateOptions, locateGateway } from "./locate.ts";

type Answer = unknown | ((query: Record<string, string>) => unknown);

/** A KubeClient that answers GET/LIST by path; a KubeError instance is thrown. */
function fakeClient(routes: Record<string, Answer>): KubeClient {
  const answer = (p: string, q: Record<string, string> = {}) => {
    const a = routes[p];
    if (a === undefined) throw new KubeError("GET", p, 404, { message: `${p} not found` });
    const v = typeof a === "function" ? (a as (q: Record<string, string>) => unknown)(q) : a;
    if (v instanceof Error) throw v;
    return v;
  };
  return {
    get: async (p: string) => answer(p),
    list: async (p: string, q?: Record<string, string>) => answer(p, q),
  } as unknown as KubeClient;
}

const NS = "kruntimes";
const SVC = "/api/v1/namespaces/kruntimes/services";
const SLICES = "/apis/discovery.k8s.io/v1/namespaces/kruntimes/endpointslices";
const PODS = "/api/v1/namespaces/kruntimes/pods";
const CM = "/api/v1/namespaces/kruntimes/configmaps/kruntimes-gateway-ca";

const service = (
  ports: string[],
  annotations: Record<string, string> = { "kruntimes.io/ca-configmap": "kruntimes-gateway-ca" },
) => ({
  items: [
    {
      metadata: { name: "kruntimes-gateway", annotations },
      spec: {
        selector: { "app.kubernetes.io/name": "kruntimes-gateway" },
        ports: ports.map((name) => ({ name, port: name === "https" ? 443 : 80, targetPort: name })),
      },
    },
  ],
});
const slice = (port: number, endpoints: { ip: string; pod: string; ready?: boolean }[], name = "https") => ({
  items: [
    {
      ports: [{ name, port }],
      endpoints: endpoints.map((e) => ({
        addresses: [e.ip],
        conditions: { ready: e.ready ?? true },
        targetRef: { kind: "Pod", name: e.pod },
      })),
    },
  ],
});

let listener: { port: number; stop(closeActive?: boolean): void };
beforeAll(() => {
  listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
});
afterAll(() => listener.stop(true));

const opts = (o: Partial<LocateOptions> = {}): LocateOptions => ({
  namespace: NS,
  via: "auto",
  insecure: false,
  kubectl: { bin: "/nonexistent/kubectl" },
  dialTimeoutMs: 500,
  ...o,
});

async function cliError(p: Promise<unknown>): Promise<CliError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(CliError);
    return e as CliError;
  }
  throw new Error("did not fail");
}

describe("finding the gateway", () => {
  test("the Service's https port, its CA, its ready endpoints; the name to verify is the Service's", async () => {
    const client = fakeClient({
      [SVC]: (q: Record<string, string>) => {
        expect(q.labelSelector).toBe("app.kubernetes.io/name=kruntimes-gateway");
        return service(["http", "https", "metrics"]);
      },
      [CM]: { data: { "ca.crt": "PEM" } },
      [SLICES]: (q: Record<string, string>) => {
        expect(q.labelSelector).toBe("kubernetes.io/service-name=kruntimes-gateway");
        return slice(8443, [
          { ip: "10.0.0.1", pod: "gw-a" },
          { ip: "10.0.0.2", pod: "gw-b", ready: false },
        ]);
      },
    });
    expect(await discoverGateway(client, NS)).toEqual({
      service: "kruntimes-gateway",
      scheme: "https",
      serverName: "kruntimes-gateway.kruntimes.svc",
      ca: "PEM",
      endpoints: [{ address: "10.0.0.1", port: 8443, pod: "gw-a" }],
    });
  });

  test("no ready address in the slices (the local cluster's loopback IPs): the Service's ready pods", async () => {
    const client = fakeClient({
      [SVC]: service(["https"]),
      [CM]: { data: { "ca.crt": "PEM" } },
      [SLICES]: { items: [{ ports: null, endpoints: null }] },
      [PODS]: {
        items: [
          {
            metadata: { name: "gw-a" },
            spec: { containers: [{ ports: [{ name: "https", containerPort: 8443 }] }] },
            status: { podIP: "127.1.0.3", conditions: [{ type: "Ready", status: "True" }] },
          },
          {
            metadata: { name: "gw-b" },
            spec: { containers: [{ ports: [{ name: "https", containerPort: 8443 }] }] },
            status: { podIP: "127.1.0.4", conditions: [{ type: "Ready", status: "False" }] },
          },
        ],
      },
    });
    expect((await discoverGateway(client, NS)).endpoints).toEqual([
      { address: "127.1.0.3", port: 8443, pod: "gw-a" },
    ]);
  });

  test("connects to the first pod that accepts: dead addresses are skipped, TLS verified for the Service", async () => {
    const port = listener.port;
    const client = fakeClient({
      [SVC]: service(["https"]),
      [CM]: { data: { "ca.crt": "PEM" } },
      // 127.0.0.1:1 refuses; the listener accepts.
      [SLICES]: {
        items: [
          {
            ports: [{ name: "https", port: 1 }],
            endpoints: [{ addresses: ["127.0.0.1"], targetRef: { kind: "Pod", name: "dead" } }],
          },
          {
            ports: [{ name: "https", port }],
            endpoints: [{ addresses: ["127.0.0.1"], targetRef: { kind: "Pod", name: "live" } }],
          },
        ],
      },
    });
    const t = await locateGateway(client, opts());
    expect(t.baseUrl).toBe(`https://127.0.0.1:${port}`);
    expect(t.tls).toEqual({ ca: "PEM", serverName: "kruntimes-gateway.kruntimes.svc" });
    expect(t.via).toBe("direct 127.0.0.1");
    const insecure = await locateGateway(client, opts({ insecure: true }));
    expect(insecure.tls).toEqual({ rejectUnauthorized: false });
    const ownCa = await locateGateway(client, opts({ ca: "MINE" }));
    expect(ownCa.tls.ca).toBe("MINE");
  });

  test("nothing reachable: --gateway-via direct says so; auto falls back to kubectl port-forward", async () => {
    const client = fakeClient({
      [SVC]: service(["http"], {}),
      [SLICES]: slice(1, [{ ip: "127.0.0.1", pod: "gw-a" }], "http"),
    });
    const direct = await cliError(locateGateway(client, opts({ via: "direct" })));
    expect(direct.exitCode).toBe(ExitCode.Unavailable);
    expect(direct.message).toContain(
      "cannot connect to any gateway pod of kruntimes/kruntimes-gateway (127.0.0.1:1)",
    );
    expect(direct.hint).toContain("--gateway-via port-forward");
    const auto = await cliError(locateGateway(client, opts()));
    expect(auto.message).toContain('cannot run "/nonexistent/kubectl" for a port-forward');
    expect(auto.hint).toContain("$KRT_KUBECTL");
  });

  test("what is missing is named: no Service, two Services, no right to list them", async () => {
    const none = await cliError(discoverGateway(fakeClient({ [SVC]: { items: [] } }), NS));
    expect(none.exitCode).toBe(ExitCode.NotFound);
    expect(none.hint).toContain("--gateway-namespace");
    const two = service(["https"]);
    two.items.push({
      ...(two.items[0] as (typeof two.items)[number]),
      metadata: { name: "other", annotations: {} },
    });
    const both = await cliError(discoverGateway(fakeClient({ [SVC]: two }), NS));
    expect(both.exitCode).toBe(ExitCode.Usage);
    expect(both.message).toContain("kruntimes-gateway, other");
    const forbidden = await cliError(
      discoverGateway(fakeClient({ [SVC]: new KubeError("GET", SVC, 403, { message: "forbidden" }) }), NS),
    );
    expect(forbidden.exitCode).toBe(ExitCode.Forbidden);
    expect(forbidden.message).toContain('you may not list services in namespace "kruntimes"');
    expect(forbidden.hint).toContain("gateway.discovery");
  });

  test("--gateway URL: used as given; http needs no TLS; a bad URL is a usage error", async () => {
    const client = fakeClient({});
    const t = await locateGateway(client, opts({ url: "http://gw.example:8080/" }));
    expect(t).toMatchObject({ baseUrl: "http://gw.example:8080", via: "url", tls: {} });
    const withCa = await locateGateway(client, opts({ url: "https://gw.example", ca: "MINE" }));
    expect(withCa.tls).toEqual({ ca: "MINE" });
    expect((await cliError(locateGateway(client, opts({ url: "not a url" })))).exitCode).toBe(ExitCode.Usage);
  });
});
