/** A RunStatusWriter that records patches (and can be told to fail) for unit tests. */
import type { Run } from "@kruntimes/api";
import { KubeError } from "@kruntimes/kube";
import type { JsonPatchOp } from "../status/json-patch.ts";
import type { RunStatusWriter } from "../status/run-status-writer.ts";

export class RecordingWriter implements RunStatusWriter {
  readonly patches: { run: string; ops: JsonPatchOp[] }[] = [];
  failWith: number | undefined;

  async patch(run: Run, ops: JsonPatchOp[]): Promise<Run> {
    if (this.failWith !== undefined) {
      const message =
        this.failWith === 422
          ? "the server rejected our request: testing value /status/phase failed"
          : "boom";
      throw new KubeError("PATCH", "/status", this.failWith, { message });
    }
    this.patches.push({ run: `${run.metadata.namespace}/${run.metadata.name}`, ops });
    return { ...run, status: this.lastStatus() as Run["status"] };
  }

  /** The status the last patch wrote. */
  lastStatus(): Record<string, unknown> | undefined {
    const ops = this.patches.at(-1)?.ops ?? [];
    const write = ops.find((o) => o.op === "add" && o.path === "/status");
    return write && "value" in write ? (write.value as Record<string, unknown>) : undefined;
  }
}
