import dns from "node:dns";
import net from "node:net";

/**
 * The SSRF guard of webhook delivery (contract 8): when on (by default under NODE_ENV=production,
 * `WEBHOOK_TARGET_GUARD` overrides), deliveries go only to https URLs whose every resolved address is a
 * public one. The address is checked at connection time by the lookup the request itself uses, so a
 * name cannot resolve to a public address for the check and a private one for the connection. Redirects
 * are never followed (a 3xx is a failed attempt).
 */

export interface TargetPolicy {
  /** https only, and no loopback, private, link-local, metadata or otherwise non-public address. */
  guard: boolean;
}

const blocked = new net.BlockList();
for (const [prefix, bits] of [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, including the cloud metadata address 169.254.169.254
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
] as const)
  blocked.addSubnet(prefix, bits, "ipv4");
for (const [prefix, bits] of [
  ["::", 128],
  ["::1", 128],
  ["100::", 64], // discard
  ["2001::", 32], // Teredo
  ["2001:db8::", 32], // documentation
  ["fc00::", 7], // unique local, including fd00:ec2::254 (metadata)
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local
  ["ff00::", 8], // multicast
] as const)
  blocked.addSubnet(prefix, bits, "ipv6");

/** The eight 16-bit groups of an IPv6 address, or undefined. */
function ipv6Groups(address: string): number[] | undefined {
  let text = address.toLowerCase().replace(/%.*$/, "");
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    if (net.isIPv4(dotted[1]) === false) return undefined;
    const [a, b, c, d] = dotted[1].split(".").map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const groups = [...head, ...Array(Math.max(0, fill)).fill("0"), ...tail].map((g) => Number.parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => g >= 0 && g <= 0xffff) ? groups : undefined;
}

const v4From = (hi: number, lo: number): string => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/** True for any address a webhook must not be delivered to (see the lists above); unparsable counts as forbidden. */
export function isForbiddenAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, "");
  const family = net.isIP(bare.replace(/%.*$/, ""));
  if (family === 4) return blocked.check(bare, "ipv4");
  if (family !== 6) return true;
  const g = ipv6Groups(bare);
  if (!g) return true;
  // Addresses that carry an IPv4 address inside: judged by that address.
  const zeros = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeros(5) && g[5] === 0xffff) return isForbiddenAddress(v4From(g[6], g[7])); // ::ffff:a.b.c.d
  if (zeros(6) && (g[6] !== 0 || g[7] > 1)) return isForbiddenAddress(v4From(g[6], g[7])); // ::a.b.c.d
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0))
    return isForbiddenAddress(v4From(g[6], g[7])); // NAT64
  if (g[0] === 0x2002) return isForbiddenAddress(v4From(g[1], g[2])); // 6to4
  return blocked.check(bare.replace(/%.*$/, ""), "ipv6");
}

export class BlockedTargetError extends Error {}

/** Why a URL may not be delivered to before any lookup (scheme, a literal address), or undefined. */
export function refuseUrl(url: URL, policy: TargetPolicy): string | undefined {
  if (url.protocol !== "https:" && url.protocol !== "http:") return `unsupported scheme ${url.protocol}`;
  if (!policy.guard) return undefined;
  if (url.protocol !== "https:") return "only https URLs are delivered to";
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (net.isIP(host) && isForbiddenAddress(host)) return `${host} is not a public address`;
  return undefined;
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

/** A `lookup` for http(s).request that fails the connection when any resolved address is forbidden. */
export function guardedLookup(hostname: string, options: dns.LookupOptions, callback: LookupCallback): void {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const bad = addresses.find((a) => isForbiddenAddress(a.address));
    if (bad || addresses.length === 0)
      return callback(
        new BlockedTargetError(`${hostname} resolves to ${bad?.address ?? "nothing"}, not a public address`),
        [],
      );
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
}
