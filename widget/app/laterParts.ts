/**
 * The checkout's second chunk (later.ts loads it): what runs only once the donor acts, never to draw the
 * page's first HTML. The screens after sending, the sending itself with its checks, and the bridge to a
 * processor's own fields.
 */
export { attachPaymentFields } from "./paymentFields.js";
export { Declined, Success, UpsellOffer } from "./results.js";
export { submit } from "./submissionModel.js";
