import pg from "pg";

/**
 * Records the text of every query a pg client sends from now until `stop()`: each is one round trip to
 * PostgreSQL (node-pg does not pipeline).
 */
export function recordPgQueries(): { sent: string[]; stop(): void } {
  const sent: string[] = [];
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const text = typeof args[0] === "string" ? args[0] : (args[0] as { text?: string } | null)?.text;
    sent.push(String(text));
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  const stop = () => {
    pg.Client.prototype.query = query;
  };
  return { sent, stop };
}
