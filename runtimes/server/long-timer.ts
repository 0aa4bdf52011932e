/**
 * setTimeout for the contract's uint32 millisecond fields: timers above 2^31-1 ms (~24.8 days)
 * would fire at once in JavaScript, so longer waits are chained.
 */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface LongTimer {
  cancel(): void;
}

export function longTimeout(fn: () => void, ms: number, max = MAX_TIMER_MS): LongTimer {
  let timer: ReturnType<typeof setTimeout>;
  const arm = (left: number) => {
    timer = setTimeout(() => (left > max ? arm(left - max) : fn()), Math.min(left, max));
  };
  arm(ms);
  return { cancel: () => clearTimeout(timer) };
}
