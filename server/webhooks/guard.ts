import dns from "node:dns";
import net from "node:net";
import ipaddr from "ipaddr.js";

/**
 * The SSRF guard of webhook delivery: on by default in production (`WEBHOOK_TARGET_GUARD` turns it on or off
 * anywhere), deliveries go only to https URLs whose every resolved address is a public one. The address is checked at connection time by the lookup the request itself uses, so a
 * name cannot resolve to a public address for the check and a private one for the connection. Redirects
 * are never followed (a 3xx is a failed attempt).
 */

export interface TargetPolicy {
  /** https only, and no loopback, private, link-local, metadata or otherwise non-public address. */
  guard: boolean;
}

/**
 * What is public is told by ipaddr.js's ranges (a maintained list of the IANA special-purpose registries),
 * not a list of our own: only `unicast` addresses are. An IPv4-mapped IPv6 address is judged as the IPv4
 * address it is; the other translation ranges (SIIT, NAT64 including the local-use 64:ff9b:1::/48, 6to4,
 * Teredo) are not public, and the IPv4 address inside them is checked as well.
 */

/** The IPv4 address a translation IPv6 address carries (compatible, NAT64, 6to4, Teredo), if any. */
function embeddedIpv4(v6: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const p = v6.parts;
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 255, lo >> 8, lo & 255]);
  if (p.slice(0, 6).every((x) => x === 0) && (p[6] !== 0 || p[7] > 1)) return v4(p[6], p[7]); // ::a.b.c.d
  if (p[0] === 0x64 && p[1] === 0xff9b) return v4(p[6], p[7]); // NAT64: 64:ff9b::/96 and 64:ff9b:1::/48
  if (p[0] === 0x2002) return v4(p[1], p[2]); // 6to4
  // Teredo (2001::/32): the client's address, obfuscated (every bit inverted), in the last 32 bits.
  if (p[0] === 0x2001 && p[1] === 0) return v4(p[6] ^ 0xffff, p[7] ^ 0xffff);
  return undefined;
}

/** True for any address a webhook must not be delivered to; an unparsable one counts as forbidden. */
export function isForbiddenAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  if (!ipaddr.isValid(bare) || net.isIP(bare) === 0) return true;
  const parsed = ipaddr.parse(bare);
  // An IPv4-mapped address is that IPv4 address (the socket connects to it): judged as such.
  if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
    return (parsed as ipaddr.IPv6).toIPv4Address().range() !== "unicast";
  if (parsed.range() !== "unicast") return true;
  if (parsed.kind() === "ipv6") {
    const inner = embeddedIpv4(parsed as ipaddr.IPv6);
    if (inner && inner.range() !== "unicast") return true;
  }
  return false;
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
    // The address itself is left out: the message is in the organization's delivery log, which must not
    // tell a tenant what the instance's internal names resolve to.
    if (bad || addresses.length === 0)
      return callback(new BlockedTargetError(`${hostname} does not resolve to a public address`), []);
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
}
