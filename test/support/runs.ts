/** Reading Runs in e2e suites: wait until a Run satisfies a condition (bounded wait, no speed assert). */
import { type Run, RunResource } from "@kruntimes/api";
import { type KubeClient, path } from "@kruntimes/kube";
import { eventually } from "./cluster.ts";

/** The Run `name` once `ok` holds for it; fails after `timeoutMs`, naming `what`. */
export function runUntil(
  client: KubeClient,
  namespace: string,
  name: string,
  what: string,
  ok: (r: Run) => boolean,
  timeoutMs: number,
): Promise<Run> {
  return eventually(
    `${name} ${what}`,
    async () => {
      const r = await client.get<Run>(path(RunResource, namespace, name));
      return ok(r) ? r : undefined;
    },
    timeoutMs,
  );
}
