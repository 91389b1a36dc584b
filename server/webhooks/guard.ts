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

/**
 * Special-use names that never name a public host (RFC 6761 `localhost`, mDNS `.local`, `home.arpa`,
 * ICANN's private-use `.internal`): refused without a lookup.
 */
export function isLocalName(hostname: string): boolean {
  return /(^|\.)(localhost|local|internal|home\.arpa)\.?$/i.test(hostname);
}

/** The two queries a guarded lookup makes; `dns.promises.Resolver` in production. */
export type AddressResolver = Pick<dns.promises.Resolver, "resolve4" | "resolve6">;

/**
 * The name server is asked directly (c-ares, on the event loop), never through the system's getaddrinfo,
 * which runs on libuv's four-thread pool: a tenant's name whose server never answers would otherwise hold
 * those threads, which sign-in hashing and file reads share, for the resolver's whole retry schedule.
 * Each query gives up after LOOKUP_TIMEOUT_MS per try, LOOKUP_TRIES tries.
 */
const LOOKUP_TIMEOUT_MS = 2000;
const LOOKUP_TRIES = 2;
const systemResolver = new dns.promises.Resolver({ timeout: LOOKUP_TIMEOUT_MS, tries: LOOKUP_TRIES });

/** Answers that mean the name has no address of that family, not that the name server failed. */
const NO_ADDRESS = new Set<string>([dns.NOTFOUND, dns.NODATA]);

/**
 * A name's addresses when every one of them is public (of `family` only, when given); else a
 * BlockedTargetError, or the name server's failure. The address itself is left out of every message: it
 * is in the organization's delivery log, which must not tell a tenant what the instance's internal names
 * resolve to.
 */
async function publicAddresses(
  resolver: AddressResolver,
  hostname: string,
  family: number | undefined,
): Promise<dns.LookupAddress[]> {
  const blocked = () => new BlockedTargetError(`${hostname} does not resolve to a public address`);
  const literal = net.isIP(hostname);
  if (literal) {
    if (isForbiddenAddress(hostname)) throw blocked();
    return [{ address: hostname, family: literal }];
  }
  if (isLocalName(hostname)) throw blocked();
  const [v4, v6] = await Promise.allSettled([
    family === 6 ? Promise.resolve([]) : resolver.resolve4(hostname),
    family === 4 ? Promise.resolve([]) : resolver.resolve6(hostname),
  ]);
  const addresses: dns.LookupAddress[] = [
    ...(v4.status === "fulfilled" ? v4.value.map((address) => ({ address, family: 4 })) : []),
    ...(v6.status === "fulfilled" ? v6.value.map((address) => ({ address, family: 6 })) : []),
  ];
  if (addresses.some((a) => isForbiddenAddress(a.address))) throw blocked();
  if (addresses.length > 0) return addresses;
  const failure = [v4, v6]
    .map((r) => (r.status === "rejected" ? (r.reason as NodeJS.ErrnoException) : undefined))
    .find((e) => e?.code && !NO_ADDRESS.has(e.code));
  if (!failure) throw blocked();
  const err: NodeJS.ErrnoException = new Error(`the name server did not answer for ${hostname}`);
  err.code = failure.code;
  throw err;
}

/**
 * A `lookup` for http(s).request that resolves a name's IPv4 and IPv6 addresses with `resolver` and fails
 * the connection when any of them is forbidden, or when there are none.
 */
export function guardedLookupWith(resolver: AddressResolver) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    const family = options.family === "IPv4" ? 4 : options.family === "IPv6" ? 6 : options.family;
    publicAddresses(resolver, hostname, family).then(
      (addresses) => {
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0].address, addresses[0].family);
      },
      (err: NodeJS.ErrnoException) => callback(err, []),
    );
  };
}

/** The guarded lookup of webhook deliveries, asking the system's name servers. */
export const guardedLookup = guardedLookupWith(systemResolver);
