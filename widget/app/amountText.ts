/**
 * What a donor types as an amount, read as a number of major units (dollars, euros), in the page's
 * language: "25.50", "$1,234.5", "25,50 €", "1.234,50", "1 234,5", "٢٥٫٥٠". A text that could mean two
 * amounts is refused rather than guessed at, so that a typed amount is never charged 100 or 1,000 times
 * over:
 * - with both a comma and a point, the last of the two is the decimal mark and the other groups thousands;
 * - a lone mark followed by exactly 3 digits ("1,500", "1.500") groups thousands where the language groups
 *   with it (English "1,500", German "1.500": 1500), and is refused where it is the decimal mark;
 * - otherwise a lone comma or point is the decimal mark, and a repeated one groups thousands;
 * - groups are 3 digits; spaces, apostrophes and the Arabic separators group too;
 * - currency symbols, and a currency code before or after, are left out; a sign or an exponent is refused.
 * At most 2 decimals; null for anything else.
 */
export function parseAmount(text: string, language: string): number | null {
  let s = text
    .replace(/[٠-٩۰-۹]/g, (digit) => String(digit.charCodeAt(0) & 15))
    .replace(/[\s\p{Sc}]|^\p{L}{1,3}|\p{L}{1,3}$/gu, "")
    .replace("٫", "D")
    .replace(/[٬'’]/g, "G");
  const mark = s.lastIndexOf(".") > s.lastIndexOf(",") ? "." : ",";
  const other = mark === "." ? "," : ".";
  if (s.includes(other)) s = s.replaceAll(other, "G").replace(mark, "D");
  else if (s.includes(mark)) {
    const grouped =
      s.split(mark).length > 2 ||
      (s.length - s.indexOf(mark) === 4 && new Intl.NumberFormat(language).format(1e4)[2] === mark);
    s = grouped ? s.replaceAll(mark, "G") : s.replace(mark, "D");
  }
  if (!/^(\d{1,3}(G\d{3})*|\d+)(D\d\d?)?$/.test(s)) return null;
  return Number(s.replaceAll("G", "").replace("D", "."));
}
