/** Microsecond wall-clock time, as the contract's *_micros fields carry it (one implementation: api/src/clock.ts). */
export { nowMicros } from "../../api/src/clock.ts";
