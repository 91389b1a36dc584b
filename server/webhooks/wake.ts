/**
 * A process-local nudge: queuing a delivery tells this process's dispatcher to look now rather than at its
 * next poll. It is only a hint (the queuing transaction may not have committed yet, or may roll back); the
 * database stays the only record of what is due, and other processes find it by polling.
 */

type Listener = () => void;
const listeners = new Set<Listener>();

export function onDeliveriesQueued(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function deliveriesQueued(): void {
  for (const listener of listeners) listener();
}
