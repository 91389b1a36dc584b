import QRCode from "qrcode";
import { TICKET_CODE } from "../../shared/ticketCode.js";

/**
 * QR codes in e-mails, as inline PNG images: the HTML part shows `<img src="cid:…">` and the message
 * carries the image as a related part with that Content-ID. That is what mail clients show most widely
 * (Gmail, for one, drops `data:` images, and remote images are often blocked until the reader allows
 * them). The HTML names what each image encodes (`cid:qr.<ticket code>@almoner`), so the outbox keeps
 * text only and the transport draws the images when it sends: a message without such a reference is
 * sent exactly as before.
 */

const HOST = "almoner";

/** The Content-ID of the QR image of a ticket code, as the HTML refers to it (after `cid:`). */
export function qrContentId(code: string): string {
  return `qr.${code}@${HOST}`;
}

// Only an attribute the renderer wrote: donors' text is escaped, so it cannot hold `src="`.
const REFERENCE = /src="cid:qr\.([0-9A-Z-]{1,32})@almoner"/g;

export interface InlineImage {
  filename: string;
  content: Buffer;
  contentType: "image/png";
  cid: string;
}

/** The QR images an HTML part refers to, each once, in the order they first appear. */
export async function inlineQrImages(html: string): Promise<InlineImage[]> {
  const codes = [...new Set(Array.from(html.matchAll(REFERENCE), (m) => m[1]))].filter((code) =>
    TICKET_CODE.test(code),
  );
  return Promise.all(
    codes.map(async (code) => ({
      filename: `ticket-${code}.png`,
      // Medium error correction, a quiet zone of 4 modules, 6 px a module: sharp on screens and paper.
      content: await QRCode.toBuffer(code, {
        type: "png",
        errorCorrectionLevel: "M",
        margin: 4,
        scale: 6,
      }),
      contentType: "image/png" as const,
      cid: qrContentId(code),
    })),
  );
}
