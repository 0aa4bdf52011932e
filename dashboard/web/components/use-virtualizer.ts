/**
 * @tanstack/virtual-core bound to Preact: only the rows in view (plus a few) are rendered, so
 * thousands of Runs cost what a screenful does. The adapter is the library's documented one.
 */
import { elementScroll, observeElementOffset, observeElementRect, Virtualizer } from "@tanstack/virtual-core";
import { useLayoutEffect, useMemo, useReducer } from "preact/hooks";

export function useVirtualizer(
  count: number,
  getScrollElement: () => HTMLElement | null,
  rowHeight: number,
): Virtualizer<HTMLElement, Element> {
  const [, rerender] = useReducer((x: number) => x + 1, 0);
  const v = useMemo(
    () =>
      new Virtualizer<HTMLElement, Element>({
        count,
        getScrollElement,
        estimateSize: () => rowHeight,
        scrollToFn: elementScroll,
        observeElementRect,
        observeElementOffset,
        overscan: 12,
        onChange: () => rerender(0),
      }),
    [],
  );
  v.setOptions({ ...v.options, count });
  useLayoutEffect(() => v._didMount(), []);
  useLayoutEffect(() => {
    v._willUpdate();
  });
  return v;
}
