/** Writes a fenced JSON patch to a Run's status subresource. */
import { type Run, RunResource } from "@kruntimes/api";
import { type KubeClient, path } from "@kruntimes/kube";
import type { JsonPatchOp } from "./json-patch.ts";

export interface RunStatusWriter {
  /** Applies the patch; resolves with the stored Run. */
  patch(run: Run, ops: JsonPatchOp[]): Promise<Run>;
}

export class ApiRunStatusWriter implements RunStatusWriter {
  constructor(private readonly client: KubeClient) {}

  patch(run: Run, ops: JsonPatchOp[]): Promise<Run> {
    return this.client.patch<Run>(
      path(RunResource, run.metadata.namespace, run.metadata.name, "status"),
      ops,
      "json",
    );
  }
}
