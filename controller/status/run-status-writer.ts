/** Writes a fenced JSON patch to a Run's status subresource. */
import { type Run, RunResource } from "@kruntimes/api";
import { type KubeClient, path } from "@kruntimes/kube";
import type { JsonPatchOp } from "./json-patch.ts";

export interface RunStatusWriter {
  patch(run: Run, ops: JsonPatchOp[]): Promise<void>;
}

export class ApiRunStatusWriter implements RunStatusWriter {
  constructor(private readonly client: KubeClient) {}

  async patch(run: Run, ops: JsonPatchOp[]): Promise<void> {
    await this.client.patch(
      path(RunResource, run.metadata.namespace, run.metadata.name, "status"),
      ops,
      "json",
    );
  }
}
