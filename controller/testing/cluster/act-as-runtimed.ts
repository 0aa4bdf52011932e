/**
 * What runtimed writes, done by a test: terminal and Running statuses, fenced exactly as the
 * contract requires (`assignment.podUID` and `attempt` tested in the same JSON patch).
 */
import { type Run, RunResource } from "@kruntimes/api";
import { type KubeClient, path } from "@kruntimes/kube";
import { nowMicros } from "../../util/clock.ts";

export function runtimedPatch(run: Run, phase: "Running" | "Succeeded" | "Failed") {
  const a = run.status?.assignment;
  if (!a) throw new Error(`${run.metadata.name} is not assigned`);
  const micros = nowMicros();
  const timing = { ...run.status?.timing, startedMicros: run.status?.timing?.startedMicros ?? micros };
  return [
    { op: "test", path: "/status/assignment/podUID", value: a.podUID },
    { op: "test", path: "/status/attempt", value: run.status?.attempt },
    { op: "replace", path: "/status/phase", value: phase },
    {
      op: "add",
      path: "/status/timing",
      value: phase === "Running" ? timing : { ...timing, finishedMicros: micros, reportedMicros: micros },
    },
    ...(phase === "Running"
      ? []
      : [{ op: "add", path: "/status/reason", value: phase === "Succeeded" ? "Completed" : "NonZeroExit" }]),
  ];
}

export async function writeAsRuntimed(
  client: KubeClient,
  run: Run,
  phase: "Running" | "Succeeded" | "Failed",
) {
  await client.patch(
    path(RunResource, run.metadata.namespace, run.metadata.name, "status"),
    runtimedPatch(run, phase),
    "json",
  );
}
