/**
 * Where `krt mcp --http` may listen, checked before anything is loaded or bound: loopback unless
 * --allow-remote, and beyond loopback only with a bearer token (see http.ts for why).
 */
import { CliError } from "../errors.ts";

export interface HttpListen {
  host: string;
  port: number;
}

/** `127.0.0.1:8080`, `[::1]:8080`, `localhost:0` (0 = any free port). */
export function parseListen(text: string): HttpListen {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[2]) : Number.NaN;
  if (!m || port > 65535)
    throw CliError.usage(
      `--http "${text}" is not HOST:PORT`,
      "e.g. --http 127.0.0.1:8765 (port 0 picks a free one)",
    );
  return { host: (m[1] as string).replace(/^\[(.*)\]$/, "$1"), port };
}

export function isLoopback(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  return h === "localhost" || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h) || h === "::ffff:127.0.0.1";
}

/** The rules above, checked before anything listens. */
export function checkHttpOptions(o: { host: string; token?: string; allowRemote: boolean; tls: boolean }): {
  warnings: string[];
} {
  if (isLoopback(o.host)) return { warnings: [] };
  if (!o.allowRemote)
    throw CliError.usage(
      `--http ${o.host}: krt mcp listens on loopback only, because every caller acts with your credentials`,
      "use --http 127.0.0.1:PORT; to serve other hosts add --allow-remote and --http-token-file (and --tls-cert/--tls-key)",
    );
  if (!o.token)
    throw CliError.usage(
      `--http ${o.host} with --allow-remote needs a bearer token: anyone who reaches the port would act with your credentials`,
      "pass --http-token-file FILE (e.g. made with `openssl rand -hex 32 > token`); clients send Authorization: Bearer <token>",
    );
  return {
    warnings: o.tls
      ? []
      : [
          `serving ${o.host} over plain HTTP: the bearer token and every tool call cross the network unencrypted; add --tls-cert and --tls-key, or keep it behind a TLS proxy`,
        ],
  };
}
