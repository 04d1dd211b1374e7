import { ApiError } from "@assistant/client";
import { useCallback, useEffect, useRef, useState } from "react";

// Live data for a tab: loads at once, then again every few seconds while the tab is shown, and on demand after an
// action (refresh). A failed load keeps the last good data and says why.

export interface Polled<T> {
  data: T | undefined;
  error: string | undefined;
  refresh: () => Promise<void>;
}

export function usePoll<T>(load: () => Promise<T>, everyMs = 5_000): Polled<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string>();
  const loadRef = useRef(load);
  loadRef.current = load;
  const refresh = useCallback(async () => {
    try {
      setData(await loadRef.current());
      setError(undefined);
    } catch (failure) {
      setError(errorText(failure));
    }
  }, []);
  useEffect(() => {
    void refresh();
    const timer = window.setInterval(refresh, everyMs);
    return () => window.clearInterval(timer);
  }, [refresh, everyMs]);
  return { data, error, refresh };
}

/** What to tell the person about a failed call: the daemon's own message (never a credential). */
export function errorText(error: unknown): string {
  return error instanceof ApiError ? error.message : error instanceof Error ? error.message : String(error);
}
