/**
 * The `kruntimes.io/function` finalizer on the Run itself (not the status subresource): added by
 * one JSON patch while the Register call is in flight, removed by one JSON patch once the
 * registration has ended. Both test the Run's UID (a same-named new Run is never touched) and the
 * removal tests the entry at the index it removes, so a concurrent change of the list fails the
 * patch instead of removing someone else's finalizer; a failed test re-reads and tries again.
 */
import { FUNCTION_FINALIZER, type Run, RunResource } from "@kruntimes/api";
import { type KubeClient, KubeError, path } from "@kruntimes/kube";
import type { JsonPatchOp } from "../status/run-status.ts";

type Op = JsonPatchOp | { op: "remove"; path: string };

export function addFinalizerPatch(run: Run): Op[] | undefined {
  const list = run.metadata.finalizers;
  if (list?.includes(FUNCTION_FINALIZER)) return undefined;
  const uid: Op = { op: "test", path: "/metadata/uid", value: run.metadata.uid };
  return list?.length
    ? [uid, { op: "add", path: "/metadata/finalizers/-", value: FUNCTION_FINALIZER }]
    : [uid, { op: "add", path: "/metadata/finalizers", value: [FUNCTION_FINALIZER] }];
}

export function removeFinalizerPatch(run: Run): Op[] | undefined {
  const i = run.metadata.finalizers?.indexOf(FUNCTION_FINALIZER) ?? -1;
  if (i < 0) return undefined;
  return [
    { op: "test", path: "/metadata/uid", value: run.metadata.uid },
    { op: "test", path: `/metadata/finalizers/${i}`, value: FUNCTION_FINALIZER },
    { op: "remove", path: `/metadata/finalizers/${i}` },
  ];
}

/**
 * Applies `build(run)` to the Run, re-reading it when a test fails (the list changed), up to 3
 * times. Returns the stored Run, or undefined when the Run is gone (or became another Run).
 */
export async function patchFinalizers(
  client: KubeClient,
  run: Run,
  build: (r: Run) => Op[] | undefined,
): Promise<Run | undefined> {
  const p = path(RunResource, run.metadata.namespace, run.metadata.name);
  let current = run;
  for (let i = 0; ; i++) {
    const ops = build(current);
    if (!ops) return current;
    try {
      return await client.patch<Run>(p, ops, "json");
    } catch (e) {
      if (e instanceof KubeError && e.code === 404) return undefined;
      if (!(e instanceof KubeError && e.code === 422) || i >= 3) throw e;
      const fresh = await client.get<Run>(p).catch((err) => {
        if (err instanceof KubeError && err.code === 404) return undefined;
        throw err;
      });
      if (!fresh || fresh.metadata.uid !== run.metadata.uid) return undefined;
      current = fresh;
    }
  }
}
