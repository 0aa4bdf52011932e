/**
 * `krt dashboard`: the web dashboard on this machine, acting with your kubeconfig's credentials
 * (local mode). It listens on a loopback address only — whoever reaches it acts as you — and
 * answers only to Host 127.0.0.1/localhost (DNS rebinding cannot borrow it).
 */
import { Command, Option } from "clipanion";
import { KrtCommand } from "../base-command.ts";
import { CliError } from "../errors.ts";
import { ExitCode } from "../exit-codes.ts";
import type { GlobalOptions } from "../options.ts";

export class DashboardCommand extends KrtCommand {
  static override paths = [["dashboard"]];
  static override usage = Command.Usage({
    category: "General",
    description: "Open the web dashboard on this machine, with your kubeconfig's credentials",
    details: `
      Starts the read-only dashboard (docs/dashboard.md) on a loopback address, prints its URL and
      serves until interrupted (Ctrl-C). Every request it makes uses the credentials of your
      kubeconfig context, so it shows what you may see; it never writes to the cluster. The invoke
      box and artifact downloads need a kubeconfig user with a bearer token.

      \`--address\` must be a loopback address (127.0.0.1, ::1, localhost): the dashboard acts as
      you for whoever reaches it. To share a dashboard, install it with the chart
      (\`dashboard.enabled=true\`), where everyone signs in with their own token.

      \`--open\` opens the URL in your browser (xdg-open, or open on macOS).
    `,
    examples: [
      ["Start it and open the browser", "krt dashboard --open"],
      ["On a fixed port", "krt dashboard --port 8090"],
      ["With the gateway of a release in namespace team-a", "krt dashboard --gateway-namespace team-a"],
    ],
  });

  address = Option.String("--address", "127.0.0.1", { description: "Loopback address to listen on" });
  port = Option.String("--port", "0", { description: "Port to listen on (0: a free one)" });
  open = Option.Boolean("--open", false, { description: "Open the dashboard in a browser" });
  gatewayNamespace = Option.String("--gateway-namespace", "kruntimes", {
    description: "Namespace of the gateway (the invoke box)",
  });
  assetsDir = Option.String("--assets-dir", {
    description: "Prebuilt web UI (bun dashboard/build.ts <dir>); default: bundle it from the source tree",
  });

  async run(opts: GlobalOptions): Promise<number | undefined> {
    // Loaded here, not at the top: other commands do not pay for the web server's modules.
    const { isLoopback } = await import("../../dashboard/server/options.ts");
    const { startDashboard } = await import("../../dashboard/server/dashboard.ts");
    const { dashboardLogger } = await import("../../dashboard/server/log.ts");
    if (!isLoopback(this.address))
      throw CliError.usage(
        `--address ${this.address} is not a loopback address; krt dashboard acts with your credentials for whoever connects`,
        "use 127.0.0.1, or install the dashboard with the chart (dashboard.enabled=true) to share it",
      );
    const port = Number(this.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw CliError.usage(`--port "${this.port}" must be a whole number from 0 to 65535`);
    const { conn, namespace } = this.connect(opts);
    const log = dashboardLogger("warn", 2);
    const dashboard = await startDashboard(
      {
        host: this.address,
        port,
        auth: "kubeconfig",
        caFile: "",
        gatewayNamespace: this.gatewayNamespace,
        logLevel: "warn",
        ...(this.assetsDir ? { assetsDir: this.assetsDir } : {}),
      },
      conn,
      log,
    ).catch((e: unknown) => {
      throw new CliError(
        ExitCode.Internal,
        `cannot start the dashboard: ${e instanceof Error ? e.message : e}`,
        "run krt from a source checkout, or pass --assets-dir with a UI built by `bun dashboard/build.ts <dir>`",
      );
    });
    const url = `${dashboard.url}ns/${encodeURIComponent(namespace)}/runs`;
    this.print(`dashboard: ${url}`);
    this.context.stderr.write("serving until interrupted (Ctrl-C)\n");
    if (this.open) openBrowser(url, this.context.stderr);
    await new Promise<void>((resolve) => {
      process.once("SIGINT", resolve);
      process.once("SIGTERM", resolve);
    });
    await dashboard.stop();
    return undefined;
  }
}

function openBrowser(url: string, stderr: NodeJS.WritableStream): void {
  const cmd = process.platform === "darwin" ? "open" : "xdg-open";
  try {
    Bun.spawn([cmd, url], { stdout: "ignore", stderr: "ignore" }).unref();
  } catch {
    stderr.write(`could not run ${cmd}; open ${url} yourself\n`);
  }
}
