/**
 * The Runtime Server: runs inside the runtime container of every Runtime Pod and serves
 * kruntimes.runtime.v1 (RuntimeService, TaskService) with the Connect protocol on a Unix socket
 * that runtimed shares. `bun runtimes/server/main.ts --runtime bash|python`, or the compiled
 * binary (runtimes/build.sh). SIGTERM/SIGINT drain; see docs/runtime-server.md.
 */
import { createLogger } from "./logger.ts";
import { OptionsError, parseOptions } from "./options.ts";
import { RuntimeServer } from "./runtime-server.ts";

async function main(): Promise<number> {
  let options: ReturnType<typeof parseOptions>;
  try {
    options = parseOptions(process.argv.slice(2), process.env);
  } catch (error) {
    if (!(error instanceof OptionsError)) throw error;
    (error.help ? process.stdout : process.stderr).write(`${error.message}\n`);
    return error.help ? 0 : 2;
  }
  const logger = createLogger(options.logLevel, { runtime: options.runtimeName, serverPid: process.pid });
  let server: RuntimeServer;
  try {
    server = await RuntimeServer.start(options, logger);
  } catch (error) {
    logger.fatal({ err: error }, "cannot start");
    return 1;
  }
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      logger.info({ signal }, "shutting down");
      server.drain().then(resolve, (error: unknown) => {
        logger.error({ err: error }, "drain failed");
        resolve();
      });
    };
    process.on("SIGTERM", () => stop("SIGTERM"));
    process.on("SIGINT", () => stop("SIGINT"));
  });
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `runtime-server: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
