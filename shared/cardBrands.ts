/** Card brands as people write them (the processors' ids are lower case); an unknown brand has none. */
const CARD_BRAND_NAMES: Readonly<Record<string, string>> = {
  visa: "Visa",
  mastercard: "Mastercard",
  amex: "American Express",
  discover: "Discover",
};

/** The brand's name, or undefined for none or one not listed (the caller says "Card"). */
export const cardBrandName = (brand: string | null | undefined): string | undefined =>
  brand ? CARD_BRAND_NAMES[brand] : undefined;
