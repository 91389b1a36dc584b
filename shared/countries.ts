import { LANGUAGES } from "./languages.js";

/**
 * The countries the checkout's country select offers: ISO 3166-1 alpha-2 codes, named by the runtime's own
 * Intl data in the page's language (no list of names in the bundle).
 */
export const COUNTRY_CODES: readonly string[] =
  "AF AL DZ AD AO AG AR AM AU AT AZ BS BH BD BB BY BE BZ BJ BT BO BA BW BR BN BG BF BI CV KH CM CA CF TD CL CN CO KM CG CD CR CI HR CU CY CZ DK DJ DM DO EC EG SV GQ ER EE SZ ET FJ FI FR GA GM GE DE GH GR GD GT GN GW GY HT HN HK HU IS IN ID IR IQ IE IL IT JM JP JO KZ KE KI KW KG LA LV LB LS LR LY LI LT LU MO MG MW MY MV ML MT MH MR MU MX FM MD MC MN ME MA MZ MM NA NR NP NL NZ NI NE NG KP MK NO OM PK PW PS PA PG PY PE PH PL PT PR QA RO RU RW KN LC VC WS SM ST SA SN RS SC SL SG SK SI SB SO ZA KR SS ES LK SD SR SE CH SY TW TJ TZ TH TL TG TO TT TN TR TM TV UG UA AE GB US UY UZ VU VA VE VN YE ZM ZW".split(
    " ",
  );

/** Text compared without case, accents or punctuation: "Côte d’Ivoire" and "cote d'ivoire" are one. */
const fold = (text: string): string =>
  text
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();

let byName: Map<string, string> | undefined;

/**
 * The code of the select's country that `text` names: one of COUNTRY_CODES in any case, or a country's name
 * (long or short, "United Kingdom" or "UK") in any language the pages speak, by the runtime's Intl data;
 * undefined for anything else, which the donor then chooses.
 */
export function countryCode(text: string): string | undefined {
  const wanted = fold(text);
  if (!wanted) return undefined;
  if (!byName) {
    const names = new Map<string, string>();
    for (const code of COUNTRY_CODES) names.set(code.toLowerCase(), code);
    for (const language of LANGUAGES)
      for (const style of ["long", "short"] as const) {
        const display = new Intl.DisplayNames([language], { type: "region", style });
        for (const code of COUNTRY_CODES) {
          const name = fold(display.of(code) ?? "");
          if (name && !names.has(name)) names.set(name, code);
        }
      }
    byName = names;
  }
  return byName.get(wanted);
}
