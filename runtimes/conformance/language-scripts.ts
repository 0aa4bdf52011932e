/**
 * The few programs the conformance suite runs, written once per language. A new runtime joins
 * the suite by providing these; the checks themselves are shared.
 */

export interface LanguageScripts {
  language: string;
  /** File extension of entrypoint scripts (".sh", ".py"). */
  extension: string;
  /** Prints "out" on stdout and "err" on stderr, exits 0. */
  hello: string;
  /** Fails the language's usual way (an unknown command, an uncaught exception): a message on stderr. */
  fail: string;
  /** Exits with `code`. */
  exit(code: number): string;
  /** Ends itself with `signal`. */
  killSelf(signal: "SIGTERM" | "SIGKILL"): string;
  /** Prints `NAME=value` per name ("NAME=<unset>" when missing). */
  printEnv(names: readonly string[]): string;
  /** An entrypoint file: prints each argument on its own line, then the working directory. */
  printArgs: string;
  /** Prints "ready", then sleeps `seconds` without output. */
  sleep(seconds: number): string;
  /** Prints "ready"; on SIGTERM prints "term" and keeps running until killed. */
  ignoreTerm: string;
  /** Prints `before`, waits until `path` exists, prints `after`. */
  waitForFile(path: string, before: string, after: string): string;
  /** Appends `text` verbatim to $KRUNTIME_OUTPUTS. */
  writeOutputs(text: string): string;
  /** Writes `n` bytes to stdout: the lines "0\n1\n2\n..." cut to exactly n bytes. */
  printBytes(n: number): string;
  /** Starts a child that sleeps 30 s in the background, prints its pid, exits 0. */
  orphan: string;
  /** Args run as commands (shell-style runtimes), or undefined when the runtime refuses them. */
  commands?: { args: string[]; stdout: string; exitCode: number };
  /** A variable the interpreter reads at start-up: a Run changing it is cold-started. */
  startupEnv: Record<string, string>;
  /** Function handlers (the function part of the suite). */
  functions: FunctionScripts;
}

/**
 * One function source defining these handlers, each named as its key:
 * - h_echo: the body back, with the request's content type and the header `x-echo: 1`;
 * - h_json: `{"got": <the body parsed as JSON>, "id": <invocation id>}` as application/json;
 * - h_state: a text showing state kept between invocations (see `stateResponses`);
 * - h_fail: a handler error whose traceback (or stderr tail) contains "boom";
 * - h_crash: kills its worker;
 * - h_wait: the body is a directory: creates `<dir>/<invocation id>.start`, waits until
 *   `<dir>/go` exists, returns "done";
 * - h_big: the body is a number n: returns n bytes "x";
 * - h_logs: writes the line "err-line" to stderr (and "out-line" to stdout where stdout is not
 *   the response), returns "ok";
 * - h_header: returns the value of the request header `x-test`.
 */
export interface FunctionScripts {
  source: string;
  /** Responses of h_state to three invocations in a row on one worker. */
  stateResponses: string[];
  /** HandlerError.type of h_fail, and its exit code. */
  failType: string;
  failExitCode: number;
  /** Log streams h_logs writes to (besides the response). */
  logStreams: string[];
  /** A source that does not load (syntax error), and a word its registration error contains. */
  syntaxError: { source: string; says: string };
  /** A name in `source` that is not a callable handler (undefined when every name is a function). */
  notCallable?: string;
}

/** The stdout of printBytes(n). */
export function expectedBytes(n: number): string {
  let text = "";
  for (let i = 0; text.length < n; i++) text += `${i}\n`;
  return text.slice(0, n);
}

const sq = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

export const bashScripts: LanguageScripts = {
  language: "bash",
  extension: ".sh",
  hello: "echo out\necho err >&2\n",
  fail: "echo start\nno_such_command_krt\n",
  exit: (code) => `exit ${code}\n`,
  killSelf: (signal) => `kill -${signal.slice(3)} $$\nsleep 5\n`,
  printEnv: (names) => names.map((n) => `echo "${n}=\${${n}-<unset>}"`).join("\n"),
  printArgs: 'for a in "$@"; do printf "%s\\n" "$a"; done\npwd\n',
  sleep: (s) => `echo ready\nsleep ${s}\n`,
  ignoreTerm: "trap 'echo term' TERM\necho ready\nwhile true; do sleep 0.05; done\n",
  waitForFile: (path, before, after) =>
    `echo ${sq(before)}\nwhile [ ! -e ${sq(path)} ]; do sleep 0.01; done\necho ${sq(after)}\n`,
  writeOutputs: (text) => `printf %s ${sq(text)} >> "$KRUNTIME_OUTPUTS"\n`,
  printBytes: (n) => `seq 0 ${n} | head -c ${n}\n`,
  orphan: "sleep 30 &\necho $!\n",
  commands: { args: ["echo one", "echo two", "exit 4", "echo never"], stdout: "one\ntwo\n", exitCode: 4 },
  startupEnv: { BASH_ENV: "/dev/null" },
  functions: {
    source: [
      "SOURCED=sourced",
      "n=0",
      `h_echo() { printf 'content-type: %s\\nx-echo: 1\\n' "$KRUNTIME_CONTENT_TYPE" > "$KRUNTIME_RESPONSE_META"; cat; }`,
      `h_json() { printf 'content-type: application/json\\n' > "$KRUNTIME_RESPONSE_META"; printf '{"got":%s,"id":"%s"}' "$(cat)" "$KRUNTIME_INVOCATION_ID"; }`,
      `h_state() { n=$((n + 1)); printf '%s %d' "$SOURCED" "$n"; }`,
      "h_fail() { echo boom >&2; return 3; }",
      "h_crash() { kill -9 $$; sleep 5; }",
      `h_wait() { local d; d=$(cat); : > "$d/$KRUNTIME_INVOCATION_ID.start"; while [ ! -e "$d/go" ]; do sleep 0.01; done; printf done; }`,
      `h_big() { head -c "$(cat)" /dev/zero | tr '\\0' x; }`,
      "h_logs() { echo err-line >&2; printf ok; }",
      `h_header() { printf %s "$KRUNTIME_HEADER_X_TEST"; }`,
      "",
    ].join("\n"),
    stateResponses: ["sourced 1", "sourced 1", "sourced 1"],
    failType: "NonZeroExit",
    failExitCode: 3,
    logStreams: ["stderr"],
    syntaxError: { source: "h_echo() { cat\nif then fi\n", says: "syntax error" },
  },
};

const pq = (s: string) => JSON.stringify(s);

export const pythonScripts: LanguageScripts = {
  language: "python",
  extension: ".py",
  hello: "import sys\nprint('out')\nprint('err', file=sys.stderr)\n",
  fail: "print('start')\ndef f():\n    raise ValueError('boom')\nf()\n",
  exit: (code) => `import sys\nsys.exit(${code})\n`,
  killSelf: (signal) => `import os, signal, time\nos.kill(os.getpid(), signal.${signal})\ntime.sleep(5)\n`,
  printEnv: (names) =>
    `import os\n${names.map((n) => `print(${pq(`${n}=`)} + os.environ.get(${pq(n)}, "<unset>"))`).join("\n")}\n`,
  printArgs: "import os, sys\nfor a in sys.argv[1:]:\n    print(a)\nprint(os.getcwd())\n",
  sleep: (s) => `import time\nprint('ready', flush=True)\ntime.sleep(${s})\n`,
  ignoreTerm: [
    "import signal, time",
    "signal.signal(signal.SIGTERM, lambda *_: print('term', flush=True))",
    "print('ready', flush=True)",
    "while True:",
    "    time.sleep(0.05)",
    "",
  ].join("\n"),
  waitForFile: (path, before, after) =>
    [
      "import os, time",
      `print(${pq(before)}, flush=True)`,
      `while not os.path.exists(${pq(path)}):`,
      "    time.sleep(0.01)",
      `print(${pq(after)}, flush=True)`,
      "",
    ].join("\n"),
  writeOutputs: (text) =>
    `import os\nwith open(os.environ['KRUNTIME_OUTPUTS'], 'a') as f:\n    f.write(${pq(text)})\n`,
  printBytes: (n) =>
    `import sys\ns = ''.join(f'{i}\\n' for i in range(${Math.ceil(n / 2)}))[:${n}]\nsys.stdout.write(s)\n`,
  orphan: "import subprocess\np = subprocess.Popen(['sleep', '30'])\nprint(p.pid)\n",
  startupEnv: { PYTHONHASHSEED: "7" },
  functions: {
    source: [
      "import os, sys, time",
      "import kruntime",
      "count = 0",
      "def h_echo(req):",
      '    return kruntime.Response(body=req.body, content_type=req.content_type, headers={"x-echo": "1"})',
      "def h_json(req):",
      '    return {"got": req.json(), "id": req.invocation_id}',
      "def h_state(req):",
      "    global count",
      "    count += 1",
      "    return str(count)",
      "def h_fail(req):",
      '    raise ValueError("boom")',
      "def h_crash(req):",
      "    os.kill(os.getpid(), 9)",
      "def h_wait(req):",
      "    d = req.body.decode()",
      '    open(os.path.join(d, req.invocation_id + ".start"), "w").close()',
      '    while not os.path.exists(os.path.join(d, "go")):',
      "        time.sleep(0.005)",
      '    return "done"',
      "def h_big(req):",
      '    return b"x" * int(req.body)',
      "def h_logs(req):",
      '    print("out-line")',
      '    print("err-line", file=sys.stderr)',
      '    return "ok"',
      "def h_header(req):",
      '    return req.headers.get("x-test", "")',
      "",
    ].join("\n"),
    stateResponses: ["1", "2", "3"],
    failType: "ValueError",
    failExitCode: 0,
    logStreams: ["stdout", "stderr"],
    syntaxError: { source: "def h_echo(req)\n    return 1\n", says: "SyntaxError" },
    notCallable: "count",
  },
};
