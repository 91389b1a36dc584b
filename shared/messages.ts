/**
 * The one table of messages between a host page and an Almoner iframe (version 1).
 *
 * Every message is a plain object `{ source: "almoner", version: 1, type, embedId, ...fields }`, sent with
 * `postMessage` to an explicit target origin (never "*"). A receiver acts on a message only when
 * `event.origin` is the origin it expects, `event.source` is the window it expects, `isAlmonerMessage`
 * accepts it and `embedId` names the embed it manages.
 *
 * | type                | direction     | fields             | meaning                                                 |
 * |---------------------|---------------|--------------------|---------------------------------------------------------|
 * | `ready`             | iframe → page | embedId            | the checkout has rendered and is listening              |
 * | `resize`            | iframe → page | embedId, height    | the checkout's content is `height` CSS pixels tall; the |
 * |                     |               |                    | page sizes the iframe to it so it never scrolls inside  |
 * | `close`             | iframe → page | embedId            | the donor asked to close the checkout (overlay modal)   |
 * | `checkout-complete` | iframe → page | embedId            | the donor completed a donation or registration          |
 *
 * embedId: the embed instance id the page's loader gives each iframe; it reaches the checkout page as the
 * `embedId` query parameter. 1 to 64 characters of `A-Z a-z 0-9 _ -`.
 * height: a finite number of CSS pixels, 0 to 100 000.
 *
 * Compatibility: receivers ignore fields they do not know, so adding an optional field keeps version 1.
 * Changing or removing a field, or changing what a message means, is a new version; a receiver ignores
 * versions it does not know.
 */

export const MESSAGE_SOURCE = "almoner";
export const MESSAGE_VERSION = 1;
export const MESSAGE_TYPES = ["ready", "resize", "close", "checkout-complete"] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];

/** The query parameter that carries the embed instance id into the iframe's page. */
export const EMBED_ID_PARAM = "embedId";
export const EMBED_ID_PATTERN = /^[\w-]{1,64}$/;
/**
 * The query parameter naming the origin of the page that framed the checkout, which the checkout's own
 * language links carry in embed mode (such a link reloads the iframe, whose referrer is then the form
 * host). The server takes it only from a request whose Referer is the form host itself.
 */
export const PARENT_ORIGIN_PARAM = "parentOrigin";
export const MAX_EMBED_HEIGHT = 100_000;

interface Envelope<T extends MessageType> {
  source: typeof MESSAGE_SOURCE;
  version: typeof MESSAGE_VERSION;
  type: T;
  embedId: string;
}

export type ReadyMessage = Envelope<"ready">;
export interface ResizeMessage extends Envelope<"resize"> {
  height: number;
}
export type CloseMessage = Envelope<"close">;
export type CheckoutCompleteMessage = Envelope<"checkout-complete">;

export type AlmonerMessage = ReadyMessage | ResizeMessage | CloseMessage | CheckoutCompleteMessage;

/** Whether `data` (from a MessageEvent, so untrusted) is a well-formed message of this table's version. */
export function isAlmonerMessage(data: unknown): data is AlmonerMessage {
  if (typeof data !== "object" || data === null) return false;
  const m = data as Record<string, unknown>;
  if (m.source !== MESSAGE_SOURCE || m.version !== MESSAGE_VERSION) return false;
  if (typeof m.embedId !== "string" || !EMBED_ID_PATTERN.test(m.embedId)) return false;
  if (!MESSAGE_TYPES.includes(m.type as MessageType)) return false;
  if (m.type !== "resize") return true;
  const h = m.height;
  return typeof h === "number" && Number.isFinite(h) && h >= 0 && h <= MAX_EMBED_HEIGHT;
}
