/**
 * The base of the commands that call the gateway (`krt invoke`, `krt exec`, `krt cp`, `krt ls`):
 * the gateway flags (--token, --gateway, --gateway-namespace, --gateway-via, --ca-file,
 * --insecure-skip-tls-verify) and one way to reach it (locateGateway) with the caller's bearer
 * token.
 */
import { Option } from "clipanion";
import { KrtCommand } from "../base-command.ts";
import { CliError, unreadable } from "../errors.ts";
import { ExitCode } from "../exit-codes.ts";
import { type GatewayTarget, locateGateway, VIA, type Via } from "../gateway/locate.ts";
import { type SessionClient, sessionClient } from "../gateway/session-client.ts";
import type { GlobalOptions } from "../options.ts";

export interface LocatedGateway {
  target: GatewayTarget;
  namespace: string;
  token: string;
}

export interface OpenGateway extends LocatedGateway {
  client: SessionClient;
}

export abstract class GatewayCommand extends KrtCommand {
  /** The Run subresource a caller needs `create` on, named in the no-token advice. */
  protected gatewaySubresource: "invoke" | "session" = "session";

  token = Option.String("--token", {
    description: "Bearer token to call with (default: the kubeconfig user's token)",
  });
  gateway = Option.String("--gateway", {
    description: "Gateway URL (default: $KRT_GATEWAY, else discovered)",
  });
  gatewayNamespace = Option.String("--gateway-namespace", {
    description: "Namespace of the gateway Service to discover (default kruntimes)",
  });
  gatewayVia = Option.String("--gateway-via", {
    description: "How to reach a discovered gateway: auto (direct, else port-forward), direct, port-forward",
  });
  caFile = Option.String("--ca-file", { description: "PEM CA bundle to verify the gateway with" });
  insecure = Option.Boolean("--insecure-skip-tls-verify", false, {
    description: "Do not verify the gateway's certificate (testing only)",
  });

  /** The session commands' client on the gateway; close `target` when done. */
  protected async openGateway(opts: GlobalOptions): Promise<OpenGateway> {
    this.oneNamespace(opts);
    const gw = await this.locate(opts);
    return { ...gw, client: sessionClient(gw.target) };
  }

  /** --gateway-via, checked (callers may check it before slower work). */
  protected via(): Via {
    const via = (this.gatewayVia ?? "auto") as Via;
    if (!VIA.includes(via))
      throw CliError.usage(`--gateway-via "${this.gatewayVia}"`, `use ${VIA.join(", ")}`);
    return via;
  }

  /** Finds the gateway and the caller's token; close `target` when done. */
  protected async locate(opts: GlobalOptions): Promise<LocatedGateway> {
    const via = this.via();
    let ca: string | undefined;
    if (this.caFile !== undefined) {
      try {
        ca = await Bun.file(this.caFile).text();
      } catch (e) {
        throw unreadable("--ca-file", this.caFile, e);
      }
    }
    const session = this.connect(opts);
    const token = await this.bearerToken(session.conn);
    const target = await locateGateway(session.client, {
      url: this.gateway ?? this.context.env.KRT_GATEWAY,
      namespace: this.gatewayNamespace ?? this.context.env.KRT_GATEWAY_NAMESPACE ?? "kruntimes",
      via,
      insecure: this.insecure,
      ...(ca ? { ca } : {}),
      kubectl: {
        bin: this.context.env.KRT_KUBECTL ?? "kubectl",
        ...(opts.kubeconfig ? { kubeconfig: opts.kubeconfig } : {}),
        ...(opts.context ? { context: opts.context } : {}),
      },
      dialTimeoutMs: 1500,
    });
    return { target, namespace: session.namespace, token };
  }

  private async bearerToken(conn: { token?: string; tokenFile?: string; cert?: string }): Promise<string> {
    if (this.token) return this.token;
    if (conn.token) return conn.token;
    if (conn.tokenFile) return (await Bun.file(conn.tokenFile).text()).trim();
    throw new CliError(
      ExitCode.Config,
      conn.cert
        ? "your kubeconfig user authenticates with a client certificate; the gateway checks bearer tokens only (TokenReview), so there is nothing to send"
        : "your kubeconfig user has no bearer token to send to the gateway",
      `pass one with --token, e.g. --token "$(kubectl create token <serviceaccount> -n <namespace>)" for a ServiceAccount allowed to create runs/${this.gatewaySubresource}, or use a kubeconfig context with a token`,
    );
  }
}

/** `RUN:PATH` → its parts; `RUN` alone → path "" (the workspace). */
export function remoteRef(text: string): { run: string; path: string } | undefined {
  const m = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?):(.*)$/.exec(text);
  if (!m) return undefined;
  return { run: m[1] as string, path: (m[3] as string).replace(/(.)\/+$/, "$1") };
}
