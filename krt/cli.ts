/** The krt command set: one place that registers every command (used by main.ts and gen-docs.ts). */
import { Builtins, Cli } from "clipanion";
import { buildInfo } from "./build-info.ts";
import { ArtifactDownloadCommand } from "./commands/artifact-download.ts";
import { ArtifactListCommand } from "./commands/artifact-list.ts";
import { BenchCommand } from "./commands/bench.ts";
import { CancelCommand } from "./commands/cancel.ts";
import { CompletionCommand } from "./commands/completion.ts";
import { CpCommand } from "./commands/cp.ts";
import { DashboardCommand } from "./commands/dashboard.ts";
import { DeleteCommand } from "./commands/delete.ts";
import { DescribeCommand } from "./commands/describe.ts";
import { ExecCommand } from "./commands/exec.ts";
import { GetCommand } from "./commands/get.ts";
import { InvokeCommand } from "./commands/invoke.ts";
import { ListCommand } from "./commands/list.ts";
import { LogsCommand } from "./commands/logs.ts";
import { LsCommand } from "./commands/ls.ts";
import { McpCommand } from "./commands/mcp.ts";
import { RunCommand } from "./commands/run.ts";
import { RuntimeGetCommand } from "./commands/runtime-get.ts";
import { RuntimeListCommand } from "./commands/runtime-list.ts";
import { SessionCloseCommand, SessionCreateCommand } from "./commands/session.ts";
import { VersionCommand } from "./commands/version.ts";
import { WaitCommand } from "./commands/wait.ts";
import { WorkflowRunCancelCommand } from "./commands/wfrun-cancel.ts";
import { WorkflowRunDeleteCommand } from "./commands/wfrun-delete.ts";
import { WorkflowRunDescribeCommand } from "./commands/wfrun-describe.ts";
import { WorkflowRunGetCommand } from "./commands/wfrun-get.ts";
import { WorkflowRunListCommand } from "./commands/wfrun-list.ts";
import { WorkflowRunLogsCommand } from "./commands/wfrun-logs.ts";
import { WorkflowGetCommand } from "./commands/workflow-get.ts";
import { WorkflowListCommand } from "./commands/workflow-list.ts";
import { WorkflowTriggerCommand } from "./commands/workflow-trigger.ts";
import type { KrtContext } from "./context.ts";

export const COMMANDS = [
  RunCommand,
  InvokeCommand,
  SessionCreateCommand,
  ExecCommand,
  CpCommand,
  LsCommand,
  SessionCloseCommand,
  McpCommand,
  GetCommand,
  ListCommand,
  DescribeCommand,
  LogsCommand,
  WaitCommand,
  CancelCommand,
  DeleteCommand,
  RuntimeListCommand,
  RuntimeGetCommand,
  ArtifactListCommand,
  ArtifactDownloadCommand,
  WorkflowListCommand,
  WorkflowGetCommand,
  WorkflowTriggerCommand,
  WorkflowRunListCommand,
  WorkflowRunGetCommand,
  WorkflowRunDescribeCommand,
  WorkflowRunLogsCommand,
  WorkflowRunCancelCommand,
  WorkflowRunDeleteCommand,
  BenchCommand,
  DashboardCommand,
  VersionCommand,
  CompletionCommand,
] as const;

export function createCli(): Cli<KrtContext> {
  const cli = new Cli<KrtContext>({
    binaryLabel: "krt — kruntimes CLI",
    binaryName: "krt",
    binaryVersion: buildInfo.version,
    enableColors: false,
  });
  for (const c of COMMANDS) cli.register(c);
  cli.register(Builtins.HelpCommand);
  return cli;
}
