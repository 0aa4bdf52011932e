/** `krt invoke <run>`: call a function Run once through the gateway and print its response. */
import { parseApiDuration } from "@kruntimes/api";
import type { InvokeResponse } from "@kruntimes/api/gen/kruntimes/gateway/v1/function_pb.ts";
import { Command, Option } from "clipanion";
import { CliError } from "../errors.ts";
import { ExitCode } from "../exit-codes.ts";
import { invokeFunction } from "../gateway/invoke-client.ts";
import { invokeError } from "../gateway/invoke-errors.ts";
import { buildInvokeRequest, loadBody } from "../gateway/request.ts";
import type { GlobalOptions } from "../options.ts";
import { GatewayCommand } from "./gateway-command.ts";

export class InvokeCommand extends GatewayCommand {
  static override paths = [["invoke"]];
  static override usage = Command.Usage({
    category: "Runs",
    description: "Call a function Run once through the gateway",
    details: `
      Sends one request to a Ready function Run through the kruntimes gateway
      (\`kruntimes.gateway.v1.FunctionService/Invoke\`, Connect protocol) and writes the response
      body to stdout as it is. The body is \`--data\` (text, \`@file\` or \`@-\` for stdin), or stdin
      when it is not a terminal; its content type is \`-H 'content-type: …'\`, else
      application/json when it parses as JSON, else application/octet-stream. \`-i\` prints the
      handler's status and headers first; \`-o json\` prints the whole response as JSON.

      A handler error (the handler raised, or a bash handler exited non-zero) prints its type,
      message and traceback to stderr and exits 84; the other gateway errors have their own exit
      codes (see the table below).

      Credentials: the bearer token of your kubeconfig user, or \`--token\`. A kubeconfig that
      authenticates with a client certificate has no token to send: use \`--token\`, e.g.
      \`--token "$(kubectl create token <serviceaccount>)"\`. The caller needs \`create\` on the
      \`runs/invoke\` subresource of the Run.

      Reaching the gateway: \`--gateway URL\` (or \`$KRT_GATEWAY\`); otherwise krt finds the gateway
      Service (label app.kubernetes.io/name=kruntimes-gateway) in \`--gateway-namespace\` and
      connects to its pods directly (inside the cluster's pod network), else through
      \`kubectl port-forward\` to one of them. TLS is verified with the CA the chart publishes (the
      ConfigMap the Service names), for the Service's DNS name.
    `,
    examples: [
      ["Call a function with a JSON body", `krt invoke hello -d '{"name": "krt"}'`],
      [
        "Send a file and print status and headers",
        "krt invoke resize --data @photo.jpg -H 'content-type: image/jpeg' -i > out.jpg",
      ],
      ["Pipe the body in", "echo '{\"n\": 3}' | krt invoke square"],
      ["Through an Ingress", "krt invoke hello --gateway https://fn.example.com -d '{}'"],
    ],
  });

  runName = Option.String({ name: "run" });
  data = Option.String("-d,--data", { description: "Request body: text, @file, or @- for stdin" });
  header = Option.Array("-H,--header", [], {
    description:
      "Request header 'name: value' passed to the handler (repeatable); content-type sets the body's type",
  });
  include = Option.Boolean("-i,--include", false, {
    description: "Print the handler's status and headers before the body",
  });
  timeout = Option.String("--timeout", {
    description:
      "Deadline of the call, e.g. 10s (default: the gateway's, at most the Run's invocationTimeout)",
  });
  protected override gatewaySubresource = "invoke" as const;

  async run(opts: GlobalOptions): Promise<number | undefined> {
    this.oneNamespace(opts);
    if (!["table", "json"].includes(opts.output))
      throw CliError.usage(
        `-o ${opts.output} does not apply to krt invoke`,
        "use -o json, or no -o for the body",
      );
    this.via();
    const timeoutMs = this.timeout === undefined ? undefined : parseApiDuration(this.timeout);
    if (this.timeout !== undefined && timeoutMs === undefined)
      throw CliError.usage(`--timeout "${this.timeout}" is not a duration`, "e.g. --timeout 10s");
    const body = await loadBody({
      data: this.data,
      read: async (file) =>
        new Uint8Array(
          await (file === "-" ? new Response(Bun.stdin.stream()) : Bun.file(file)).arrayBuffer(),
        ),
      ...(process.stdin.isTTY
        ? {}
        : { stdin: async () => new Uint8Array(await new Response(Bun.stdin.stream()).arrayBuffer()) }),
    });
    const request = buildInvokeRequest(body, this.header);
    const { target, namespace, token } = await this.locate(opts);
    let res: InvokeResponse;
    try {
      res = await invokeFunction(target, {
        namespace,
        run: this.runName,
        ...request,
        token,
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      });
    } catch (e) {
      throw invokeError(e, { namespace, run: this.runName, via: target.via });
    } finally {
      target.close();
    }
    this.write(res, opts.output === "json");
    return ExitCode.Ok;
  }

  private write(res: InvokeResponse, json: boolean): void {
    if (json) {
      const text = utf8(res.body);
      this.print(
        JSON.stringify(
          {
            status: res.status,
            contentType: res.contentType,
            headers: res.headers,
            invocationId: res.invocationId,
            durationMicros: Number(res.durationMicros),
            ...(text !== undefined
              ? { body: text }
              : { bodyBase64: Buffer.from(res.body).toString("base64") }),
          },
          null,
          2,
        ),
      );
      return;
    }
    if (this.include) {
      const lines = [`status: ${res.status}`, `content-type: ${res.contentType}`];
      for (const [k, v] of Object.entries(res.headers).sort(([a], [b]) => a.localeCompare(b)))
        lines.push(`${k}: ${v}`);
      lines.push(
        `x-kruntimes-invocation-id: ${res.invocationId}`,
        `x-kruntimes-duration-micros: ${res.durationMicros}`,
      );
      this.context.stdout.write(`${lines.join("\n")}\n\n`);
    }
    this.context.stdout.write(res.body);
  }

  /** The caller's bearer token: --token, else the kubeconfig user's token (or token file). */
}

/** The body as text when it is valid UTF-8, for -o json. */
function utf8(body: Uint8Array): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(body);
  } catch {
    return undefined;
  }
}
