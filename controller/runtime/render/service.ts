/** A headless Service over the Runtime's pods: stable DNS per pod for the gateway's dataplane. */
import type { Runtime } from "@kruntimes/api";
import { RUNTIMED_PORT_NAME } from "./contract.ts";
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
      ],
    },
  };
}
