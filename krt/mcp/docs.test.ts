/**
 * docs/mcp.md as written: its client configurations are valid JSON whose `krt` arguments krt
 * accepts, its `krt mcp` command lines parse, and the error it shows has the shape tool errors have.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Cli } from "clipanion";
import { createCli } from "../cli.ts";
import { McpCommand } from "../commands/mcp.ts";
import type { KrtContext } from "../context.ts";
import { CliError } from "../errors.ts";
import { ExitCode } from "../exit-codes.ts";
import { toolError } from "./tool-errors.ts";

const DOC = readFileSync(join(import.meta.dir, "..", "..", "docs", "mcp.md"), "utf8");
const blocks = (lang: string) =>
  [...DOC.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, "g"))].map((m) => m[1] as string);

const context: KrtContext = { ...Cli.defaultContext, env: {}, nowMicros: () => 0 };
const parses = (args: string[]) => expect(createCli().process(args, context)).toBeInstanceOf(McpCommand);

interface ServerEntry {
  command?: string;
  args?: string[];
  type?: string;
  url?: string;
}

test("the mcpServers configurations are JSON; stdio ones start `krt mcp` with flags krt takes", () => {
  const configs = blocks("json").map((b) => JSON.parse(b) as { mcpServers: Record<string, ServerEntry> });
  const entries = configs.flatMap((c) => Object.values(c.mcpServers));
  expect(entries.length).toBe(2);
  const stdio = entries.filter((e) => e.command);
  expect(stdio.length).toBe(1);
  for (const e of stdio) {
    expect(e.command).toBe("krt");
    expect(e.args?.[0]).toBe("mcp");
    parses(e.args as string[]);
  }
  const http = entries.find((e) => e.url);
  expect(http?.url).toEndWith("/mcp");
});

test("the `krt mcp` command lines parse", () => {
  const lines = blocks("sh")
    .flatMap((b) => b.split("\n"))
    .filter((l) => l.startsWith("krt mcp"));
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) parses(line.split(/\s+/).slice(1));
});

test("the error shown is shaped as tool errors are", () => {
  const shown = blocks("text")[0]?.trim() ?? "";
  const made = toolError(
    new CliError(
      ExitCode.NotFound,
      'session "s" in namespace "agents" not found: run agents/s does not exist',
    ),
    "session",
  );
  const shape = (t: string) => t.replace(/"[^"]*"/g, '"…"').replace(/: .*\n/, ": …\n");
  expect(shape(shown)).toBe(shape((made.content[0] as { text: string }).text));
});
