import pg from "pg";

/** One query as sent: its text, its prepared statement's name when it has one, and its connection. */
export interface SentQuery {
  text: string;
  name?: string;
  client: pg.Client;
  /**
   * Whether it cost a round trip of its own: sent while no earlier query of its connection was still
   * waiting for its answer. A query written behind an unanswered one (pipelined) shares that one's.
   */
  roundTrip: boolean;
}

/** Records every query a pg client sends from now until `stop()`, and which of them were round trips. */
export function recordPgQueries(): { sent: SentQuery[]; stop(): void } {
  const sent: SentQuery[] = [];
  const unanswered = new WeakMap<pg.Client, number>();
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const config =
      typeof args[0] === "string" ? { text: args[0] } : (args[0] as { text?: string; name?: string });
    const waiting = unanswered.get(this) ?? 0;
    sent.push({ text: String(config?.text), name: config?.name, client: this, roundTrip: waiting === 0 });
    const result = (query as (...a: unknown[]) => unknown).apply(this, args);
    if (result instanceof Promise) {
      unanswered.set(this, waiting + 1);
      const answered = () => unanswered.set(this, (unanswered.get(this) ?? 1) - 1);
      result.then(answered, answered);
    }
    return result;
  } as typeof query;
  const stop = () => {
    pg.Client.prototype.query = query;
  };
  return { sent, stop };
}

/**
 * The queries left once every transaction matching `isOther` is taken out whole (its `begin`, its
 * statements and its `commit`, all on one connection), and every transaction the recording cut: the work
 * of a timer that ran meanwhile (the API metrics' flush) is not the request's.
 */
export function withoutTransactions(sent: SentQuery[], isOther: (text: string) => boolean): SentQuery[] {
  const dropped = new Set<number>();
  sent.forEach((q, i) => {
    if (!isOther(q.text)) return;
    dropped.add(i);
    for (let j = i - 1; j >= 0; j--) {
      if (sent[j].client !== q.client) continue;
      if (/^\s*begin\b/i.test(sent[j].text)) dropped.add(j);
      if (!isOther(sent[j].text)) break;
    }
    for (let j = i + 1; j < sent.length; j++) {
      if (sent[j].client !== q.client) continue;
      if (/^\s*commit\b/i.test(sent[j].text)) dropped.add(j);
      if (!isOther(sent[j].text)) break;
    }
  });
  // Transactions cut by the recording: one begun before it started (a `commit` with no `begin` recorded on
  // its connection) or still open when it stopped (a `begin` with no `commit`). A request's own
  // transactions are whole, since it has answered by the time the recording stops.
  const open = new Map<unknown, number[]>();
  const seenBegin = new Set<unknown>();
  sent.forEach((q, i) => {
    if (dropped.has(i)) return;
    const queries = open.get(q.client) ?? [];
    if (/^\s*begin\b/i.test(q.text)) {
      seenBegin.add(q.client);
      open.set(q.client, [i]);
      return;
    }
    if (/^\s*(commit|rollback)\b/i.test(q.text)) {
      if (!seenBegin.has(q.client)) {
        dropped.add(i);
        for (let j = 0; j < i; j++) if (sent[j].client === q.client) dropped.add(j);
      }
      open.delete(q.client);
      return;
    }
    if (open.has(q.client)) queries.push(i);
  });
  for (const queries of open.values()) for (const i of queries) dropped.add(i);
  return sent.filter((_, i) => !dropped.has(i));
}
