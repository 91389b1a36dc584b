import { inflateSync } from "node:zlib";

/**
 * A WOFF 1.0 font unwrapped into the TrueType/OpenType file it compresses: each table inflated (zlib), the
 * tables written in tag order, 4-byte aligned, with their original checksums. fontkit reads WOFF itself,
 * but inflates the whole glyf table again for every glyph it reads, and reads past its end for an empty
 * last glyph (which throws); from the plain file it reads each glyph in place.
 */

interface Table {
  tag: number;
  checksum: number;
  data: Buffer;
}

const WOFF = 0x774f4646; // "wOFF"

export function woffToSfnt(woff: Buffer): Buffer {
  if (woff.readUInt32BE(0) !== WOFF) throw new Error("not a WOFF file");
  const tables = readTables(woff).sort((a, b) => a.tag - b.tag);
  const headerSize = 12 + 16 * tables.length;
  const padded = (length: number) => (length + 3) & ~3;
  const out = Buffer.alloc(headerSize + tables.reduce((sum, t) => sum + padded(t.data.length), 0));
  const log2 = Math.floor(Math.log2(tables.length));
  out.writeUInt32BE(woff.readUInt32BE(4), 0); // the flavor: TrueType or CFF
  out.writeUInt16BE(tables.length, 4);
  out.writeUInt16BE(16 * 2 ** log2, 6);
  out.writeUInt16BE(log2, 8);
  out.writeUInt16BE(16 * (tables.length - 2 ** log2), 10);
  let offset = headerSize;
  tables.forEach((table, i) => {
    const record = 12 + 16 * i;
    out.writeUInt32BE(table.tag, record);
    out.writeUInt32BE(table.checksum, record + 4);
    out.writeUInt32BE(offset, record + 8);
    out.writeUInt32BE(table.data.length, record + 12);
    table.data.copy(out, offset);
    offset += padded(table.data.length);
  });
  return out;
}

function readTables(woff: Buffer): Table[] {
  const tables: Table[] = [];
  for (let i = 0; i < woff.readUInt16BE(12); i++) {
    const entry = 44 + 20 * i;
    const offset = woff.readUInt32BE(entry + 4);
    const compressed = woff.readUInt32BE(entry + 8);
    const length = woff.readUInt32BE(entry + 12);
    const stored = woff.subarray(offset, offset + compressed);
    const data = compressed < length ? inflateSync(stored) : stored;
    if (data.length !== length) throw new Error("a WOFF table is not the length it says");
    tables.push({ tag: woff.readUInt32BE(entry), checksum: woff.readUInt32BE(entry + 16), data });
  }
  return tables;
}
