/**
 * The cut switch as the chaos suite relies on it: it forwards a pod's connections, a cut drops
 * them, connections made during the cut are accepted and never answered, and after the cut new
 * connections are forwarded again. An echo server stands in for the apiserver.
 */
import { afterAll, expect, test } from "bun:test";
import { connect } from "node:net";
import { CutSwitch } from "./cut-switch.ts";

const echo = Bun.listen({
  hostname: "127.0.0.1",
  port: 0,
  socket: {
    data(s, d) {
      s.write(d);
    },
  },
});
const cut = CutSwitch.start(echo.port);
afterAll(() => {
  cut.stop();
  echo.stop(true);
});

/** Sends `text` on a new connection to `port`; the echo, or "silent" after `ms`, or "closed". */
function roundTrip(port: number, text: string, ms = 300): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ host: "127.0.0.1", port }, () => s.write(text));
    const done = (v: string) => {
      clearTimeout(timer);
      s.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => done("silent"), ms);
    s.on("data", (d) => done(d.toString()));
    s.on("close", () => done("closed"));
    s.on("error", () => done("closed"));
  });
}

test("forwards, drops open connections on a cut, black-holes new ones during it, forwards after", async () => {
  const port = Number(await (await fetch(`${cut.controlUrl}/port?pod=p1`)).text());
  expect(Number(await (await fetch(`${cut.controlUrl}/port?pod=p1`)).text())).toBe(port);
  expect(cut.ports).toEqual([port]);
  expect(await roundTrip(port, "hello")).toBe("hello");

  const open = connect({ host: "127.0.0.1", port });
  await new Promise((r) => open.on("connect", r));
  const closed = new Promise((r) => open.on("close", r));
  cut.cut("p1", 600);
  await closed;
  expect(await roundTrip(port, "during", 300)).toBe("silent");
  await Bun.sleep(400);
  expect(await roundTrip(port, "after")).toBe("after");
});

test("a pod whose runtimed never asked cannot be cut; a bad request is refused", async () => {
  expect(() => cut.cut("nobody", 100)).toThrow("never connected through the cut switch");
  expect((await fetch(`${cut.controlUrl}/port`)).status).toBe(400);
});
