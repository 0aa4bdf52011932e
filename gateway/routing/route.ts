/**
 * What a Run says about where it is served, as a pure function: a Ready function Run with a
 * `status.endpoint` and a known pod address is a Route (fenced by Run UID + pod UID + attempt);
 * anything else says why it cannot be called.
 */
import { FunctionLimits, type Run, type RunMode, RunPhase, runModeOf } from "@kruntimes/api";
import type { PodAddress } from "./endpoint-index.ts";

export interface Route {
  namespace: string;
  name: string;
  runUID: string;
  pod: string;
  podUID: string;
  attempt: number;
  /** host:port of the pod's runtimed dataplane. */
  address: string;
  /** The Run's own request limit (spec.mode.function.maxRequestBytes or its default). */
  maxRequestBytes: number;
}

export type Resolution =
  | { kind: "route"; route: Route }
  | { kind: "notReady"; phase: string; mode: RunMode }
  | { kind: "noEndpoint"; pod: string; podUID: string; attempt: number; runUID: string };

/** Where `run` is served for `want` (the mode the caller's service calls), given pod addresses. */
export function resolveRun(
  run: Run,
  want: "function" | "session",
  addressOf: (podUID: string) => PodAddress | undefined,
): Resolution {
  const mode = runModeOf(run.spec);
  const phase = run.status?.phase ?? "";
  const ep = run.status?.endpoint;
  if (mode !== want || phase !== RunPhase.Ready || !ep?.podUID || !ep.attempt)
    return { kind: "notReady", phase, mode };
  const runUID = run.metadata.uid ?? "";
  const addr = addressOf(ep.podUID);
  if (!addr) return { kind: "noEndpoint", pod: ep.pod, podUID: ep.podUID, attempt: ep.attempt, runUID };
  return {
    kind: "route",
    route: {
      namespace: run.metadata.namespace ?? "",
      name: run.metadata.name ?? "",
      runUID,
      pod: ep.pod,
      podUID: ep.podUID,
      attempt: ep.attempt,
      address: addr.address,
      maxRequestBytes: run.spec.mode.function?.maxRequestBytes ?? FunctionLimits.defaultMaxRequestBytes,
    },
  };
}

/** Same Run, same pod, same attempt: re-resolving found nothing new. */
export function sameRoute(
  a: Pick<Route, "runUID" | "podUID" | "attempt">,
  b: Pick<Route, "runUID" | "podUID" | "attempt">,
) {
  return a.runUID === b.runUID && a.podUID === b.podUID && a.attempt === b.attempt;
}
