/**
 * The body of `krt delete` and `krt wfrun delete`: delete each named object of one kind, report
 * the missing ones on stderr and fail with NotFound at the end, so one typo does not stop the rest.
 * The subclasses declare the flags (their help names their kind) and `kind`.
 */
import { isNotFound, path, type ResourceRef } from "@kruntimes/kube";
import { KrtCommand } from "../base-command.ts";
import { CliError } from "../errors.ts";
import { ExitCode } from "../exit-codes.ts";
import type { GlobalOptions } from "../options.ts";

export interface DeleteKind {
  resource: Omit<ResourceRef, "namespace" | "name">;
  /** The kind in messages: `run`, `workflowrun`. */
  noun: string;
  /** The kind's plural in the summary error: `Runs`, `WorkflowRuns`. */
  plural: string;
  /** The summary error's hint. */
  hint: string;
}

export abstract class DeleteNamedCommand extends KrtCommand {
  abstract ignoreNotFound: boolean;
  abstract names: string[];
  protected abstract readonly kind: DeleteKind;

  async run(opts: GlobalOptions): Promise<number | undefined> {
    this.oneNamespace(opts);
    const { client, namespace } = this.connect(opts);
    const k = this.kind;
    let missing = 0;
    for (const name of this.names) {
      try {
        await client.delete(path(k.resource, namespace, name));
        this.print(`${k.noun} ${name} deleted`);
      } catch (e) {
        if (!isNotFound(e)) throw e;
        if (!this.ignoreNotFound) {
          missing++;
          this.context.stderr.write(`error: ${k.noun} "${name}" not found in namespace "${namespace}"\n`);
        }
      }
    }
    if (missing > 0)
      throw new CliError(
        ExitCode.NotFound,
        `${missing} of ${this.names.length} ${k.plural} not found`,
        k.hint,
      );
    return undefined;
  }
}
