import type { Store } from "../store/database.js";

/**
 * A process-local nudge: queuing a delivery tells this process's dispatcher to look now rather than at its
 * next poll. It is only a hint (on SQLite it comes as the insert runs, before its transaction commits; it
 * may roll back); the database stays the only record of what is due, and other processes find it by
 * polling.
 */

type Listener = () => void;

/**
 * Calls `listener` whenever this process queues a delivery in `store`: inserts into webhook_deliveries
 * through the store's query builder, as the store's driver reports them (store/writes.ts). Only that
 * store's: another store in the same process wakes its own listeners.
 */
export function onDeliveriesQueued(store: Pick<Store, "writes">, listener: Listener): () => void {
  return store.writes.on((write) => {
    if (write.table === "webhook_deliveries" && (write.kind === "insert" || write.kind === "merge"))
      listener();
  });
}
