import { useEffect, useRef, useState } from "preact/hooks";
import { listPage } from "./api.js";
import { ErrorNote, messageOf } from "./ui.js";

/**
 * A list read page by page through the API's cursor: the first page when the filters change, the next one
 * when the person asks for more. Nothing loads a whole table.
 */
export function usePagedList<Item>(
  path: string,
  name: string,
  params: Record<string, string | number | boolean | undefined>,
  pageSize = 25,
) {
  const [items, setItems] = useState<Item[]>([]);
  const [next, setNext] = useState<string | undefined>();
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const key = JSON.stringify(params);

  useEffect(() => {
    let current = true;
    setLoading(true);
    setError(null);
    listPage<Item>(path, name, { ...params, limit: pageSize })
      .then((page) => {
        if (!current) return;
        setItems(page.items);
        setNext(page.next);
      })
      .catch((err: unknown) => {
        if (!current) return;
        // The rows of the filters before are not what these filters match: none are shown, the alert says why.
        setItems([]);
        setNext(undefined);
        setError(messageOf(err));
      })
      .finally(() => current && setLoading(false));
    return () => {
      current = false;
    };
  }, [path, name, key, pageSize]);

  const more = async () => {
    if (!next) return;
    setLoading(true);
    try {
      const page = await listPage<Item>(path, name, { ...params, limit: pageSize }, next);
      setItems((old) => [...old, ...page.items]);
      setNext(page.next);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setLoading(false);
    }
  };

  /** Changes the rows shown (one deleted, one turned off), kept when more are loaded. */
  const update = (change: (items: Item[]) => Item[]) => setItems(change);

  return { items, hasMore: next !== undefined, loading, error, more, update };
}

/**
 * A filter form's values as typed: those in the address to begin with, and again whenever the address's
 * change (a search made, Clear, Back or Forward), so the boxes always show what the list is filtered by.
 */
export function useDraft<T>(fromAddress: T): [T, (draft: T) => void] {
  const [draft, setDraft] = useState(fromAddress);
  const key = JSON.stringify(fromAddress);
  const shown = useRef(key);
  useEffect(() => {
    if (shown.current === key) return;
    shown.current = key;
    setDraft(fromAddress);
  }, [key]);
  return [draft, setDraft];
}

export function ListFooter(props: {
  count: number;
  hasMore: boolean;
  loading: boolean;
  error: string | null;
  more: () => void;
  noun: string;
}) {
  // A list that could not be read says nothing of what matched: the alert says why.
  const status = props.loading
    ? "Loading…"
    : props.count > 0
      ? `${props.count} ${props.noun}${props.hasMore ? " shown so far" : ""}.`
      : props.error
        ? ""
        : `No ${props.noun} match.`;
  return (
    <div class="list-footer">
      <ErrorNote message={props.error} />
      <p role="status">{status}</p>
      {props.hasMore && (
        <button type="button" onClick={props.more} disabled={props.loading}>
          Show more
        </button>
      )}
    </div>
  );
}
