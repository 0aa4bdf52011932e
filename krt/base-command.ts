/**
 * The base of every krt command: the global flags, resolved once into `GlobalOptions`, and one
 * error path that prints `error:`/`hint:` lines to stderr and returns the mapped exit code.
 */
import { Command, Option } from "clipanion";
import type { KrtContext } from "./context.ts";
import { CliError } from "./errors.ts";
import { ExitCode } from "./exit-codes.ts";
import { connect, type GlobalOptions, OUTPUT_FORMATS, resolveGlobals, type Session } from "./options.ts";

export abstract class KrtCommand extends Command<KrtContext> {
  kubeconfig = Option.String("--kubeconfig", {
    description: "Path of the kubeconfig file (default: $KUBECONFIG, in-cluster, then ~/.kube/config)",
  });
  kubeContext = Option.String("--context", {
    description: "Kubeconfig context to use (default: current-context)",
  });
  namespace = Option.String("-n,--namespace", {
    description: "Namespace to act in (default: the context's namespace)",
  });
  allNamespaces = Option.Boolean("-A,--all-namespaces", {
    description: "List across all namespaces (list commands only)",
  });
  output = Option.String("-o,--output", { description: `Output format: ${OUTPUT_FORMATS.join("|")}` });

  /** The API server of the last connect(), named by connection errors. */
  private conn: Session["conn"] | undefined;

  /** The command itself; returns the exit code (default 0). */
  abstract run(opts: GlobalOptions): Promise<number | undefined>;

  async execute(): Promise<number> {
    try {
      const opts = resolveGlobals({
        kubeconfig: this.kubeconfig,
        context: this.kubeContext,
        namespace: this.namespace,
        allNamespaces: this.allNamespaces,
        output: this.output,
      });
      return (await this.run(opts)) ?? ExitCode.Ok;
    } catch (e) {
      const err = CliError.from(e, this.conn);
      this.context.stderr.write(`error: ${err.message}\n`);
      if (err.hint) this.context.stderr.write(`hint: ${err.hint}\n`);
      // A stack trace only on request: the error and hint lines are what a user acts on.
      if (this.context.env.KRT_DEBUG && e instanceof Error && e.stack)
        this.context.stderr.write(`${e.stack}\n`);
      return err.exitCode;
    }
  }

  protected connect(opts: GlobalOptions): Session {
    const session = connect(opts, this.context.env);
    this.conn = session.conn;
    return session;
  }

  /** Commands that act on one object reject -A. */
  protected oneNamespace(opts: GlobalOptions): void {
    if (opts.allNamespaces)
      throw CliError.usage(
        `-A/--all-namespaces does not apply to "krt ${this.path.join(" ")}"`,
        "use -n <namespace>",
      );
  }

  protected print(text: string): void {
    this.context.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
  }
}
