/**
 * The Runtime's NetworkPolicy (with `--dataplane-network-policy`): its pods accept the `dataplane`
 * port only from the gateway pods (`--gateway-pod-labels` in `--gateway-namespace`), and every
 * other port from anywhere — expressed as two port ranges around the dataplane port, because a
 * NetworkPolicy can only allow. Egress is not restricted.
 */
import type { Runtime } from "@kruntimes/api";
import { ownedMeta, ownedNames, selectorLabels } from "./names.ts";
import type { RenderOptions } from "./render-options.ts";

const MAX_PORT = 65535;

export const NETWORK_POLICIES = { group: "networking.k8s.io", version: "v1", plural: "networkpolicies" };

/** Port ranges covering every TCP/UDP port except `port`. */
export function portsExcept(port: number): { protocol: string; port: number; endPort?: number }[] {
  const ranges: [number, number][] = [];
  if (port > 1) ranges.push([1, port - 1]);
  if (port < MAX_PORT) ranges.push([port + 1, MAX_PORT]);
  return ["TCP", "UDP", "SCTP"].flatMap((protocol) =>
    ranges.map(([from, to]) =>
      from === to ? { protocol, port: from } : { protocol, port: from, endPort: to },
    ),
  );
}

export function renderNetworkPolicy(rt: Runtime, o: RenderOptions) {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: ownedMeta(rt, ownedNames(rt).networkPolicy),
    spec: {
      podSelector: { matchLabels: selectorLabels(rt) },
      policyTypes: ["Ingress"],
      ingress: [
        {
          from: [
            {
              podSelector: { matchLabels: o.gatewayPodLabels },
              namespaceSelector: {
                matchLabels: {
                  "kubernetes.io/metadata.name": o.gatewayNamespace ?? rt.metadata.namespace ?? "",
                },
              },
            },
          ],
          ports: [{ protocol: "TCP", port: o.dataplanePort }],
        },
        { ports: portsExcept(o.dataplanePort) },
      ],
    },
  };
}
