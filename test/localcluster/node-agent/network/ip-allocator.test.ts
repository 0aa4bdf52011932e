import { describe, expect, test } from "bun:test";
import { boundAddresses, parseProcNet } from "./bound-addresses.ts";
import { IpAllocator, parseCidr } from "./ip-allocator.ts";

describe("pod IP allocation", () => {
  test("one stable address per owner; exhaustion is an error", () => {
    const ips = new IpAllocator("127.1.0.0/30");
    const a = ips.allocate("a");
    expect(ips.allocate("a")).toBe(a);
    const b = ips.allocate("b");
    expect([a, b].sort()).toEqual(["127.1.0.1", "127.1.0.2"]);
    expect(() => ips.allocate("c")).toThrow(/exhausted/);
    ips.release("a");
    expect(ips.allocate("c")).toBe("127.1.0.1");
  });
  test("round-robin: a released address is not handed out again at once", () => {
    const ips = new IpAllocator("127.2.0.0/24");
    const a = ips.allocate("a");
    ips.release("a");
    expect(ips.allocate("b")).not.toBe(a);
  });
  test("reserving a reported address; conflicts and foreign addresses are refused", () => {
    const ips = new IpAllocator("127.3.0.0/24");
    expect(ips.reserve("127.3.0.7", "a")).toBe(true);
    expect(ips.reserve("127.3.0.7", "b")).toBe(false);
    expect(ips.reserve("10.0.0.1", "b")).toBe(false);
    expect(ips.allocate("a")).toBe("127.3.0.7");
  });
  test("addresses something on the host already listens on are skipped", () => {
    const ips = new IpAllocator("127.4.0.0/24");
    expect(ips.allocate("a", (ip) => ip === "127.4.0.1" || ip === "127.4.0.2")).toBe("127.4.0.3");
  });
  test("/proc/net parsing: listening TCP sockets' local addresses", () => {
    const text = [
      "  sl  local_address rem_address   st",
      "   0: 0100007F:1F90 00000000:0000 0A",
      "   1: 0200017F:1F90 0100007F:9C40 01",
      "   2: 0500017F:0050 00000000:0000 0A",
    ].join("\n");
    expect(parseProcNet(text, "0A")).toEqual(["127.0.0.1", "127.1.0.5"]);
    expect(boundAddresses().size).toBeGreaterThanOrEqual(0);
  });
  test("the host's 127.0.0.1 is never a pod's; ranges must be loopback", () => {
    const ips = new IpAllocator("127.0.0.0/30");
    expect(ips.allocate("a")).toBe("127.0.0.2");
    expect(() => ips.allocate("b")).toThrow(/exhausted/);
    expect(() => parseCidr("10.0.0.0/8")).toThrow(/loopback/);
    expect(parseCidr("127.1.0.0/16")).toEqual({ first: 0x7f010001, last: 0x7f01fffe });
  });
});
