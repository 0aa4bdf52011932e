/**
 * A headless Service over the Runtime's pods: stable DNS per pod, and EndpointSlices (label
 * `kubernetes.io/service-name=<runtime>`) carrying each ready pod's IP, the `dataplane` port and
 * `targetRef.uid` — what the gateway routes and fences on.
 */
import type { Runtime } from "@kruntimes/api";
import { DATAPLANE_PORT_NAME, RUNTIMED_PORT_NAME } from "./contract.ts";
import { ownedMeta, ownedNames, selectorLabels } from "./names.ts";
import type { RenderOptions } from "./render-options.ts";

export function renderService(rt: Runtime, o: RenderOptions) {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: ownedMeta(rt, ownedNames(rt).service),
    spec: {
      clusterIP: "None",
      selector: selectorLabels(rt),
      publishNotReadyAddresses: false,
      ports: [
        { name: RUNTIMED_PORT_NAME, port: o.runtimedPort, targetPort: RUNTIMED_PORT_NAME, protocol: "TCP" },
        {
          name: DATAPLANE_PORT_NAME,
          port: o.dataplanePort,
          targetPort: DATAPLANE_PORT_NAME,
          protocol: "TCP",
        },
      ],
    },
  };
}
