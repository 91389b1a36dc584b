import { describe, expect, it } from "vitest";
import { isCommonPassword } from "../../server/staff/commonPasswords.js";

/**
 * The passwords staff may not choose because they are guessed first: listed common ones (also with
 * digits and symbols around them), a character or short pattern repeated, and straight runs of the
 * alphabet, the digits or the keyboard.
 */
describe("common staff passwords", () => {
  it("refuses a listed password with only digits and symbols before or after it", () => {
    for (const password of [
      "Password123!",
      "password123456",
      "welcome12345",
      "2024welcome!!",
      "!!Monkey12345",
      "Passw0rd1234",
      "qwerty123456",
      "123456qwerty",
      "iloveyou1234",
      "123456!!!!!!",
    ])
      expect(isCommonPassword(password), password).toBe(true);
  });

  it("refuses one character or a short pattern repeated", () => {
    for (const password of [
      "111111111111",
      "aaaaaaaaaaaa",
      "000000000000",
      "abc123abc123",
      "abababababab",
      "trustno1trustno1",
      "passwordpassword",
      "aaaaaa123456",
      "!!zzzzzzzz!!",
    ])
      expect(isCommonPassword(password), password).toBe(true);
  });

  it("refuses straight runs of the alphabet, the digits and the keyboard, either way", () => {
    for (const password of [
      "abcdefghijkl",
      "ABCDEFGHIJKLM",
      "lkjihgfedcba",
      "123456789012",
      "1234567890123",
      "210987654321",
      "qwertyuiopasdfgh",
      "1qaz2wsx3edc",
      "abcdef!!!!!!",
      "uvwxyzabcdef",
    ])
      expect(isCommonPassword(password), password).toBe(true);
  });

  it("accepts passphrases and random strings", () => {
    for (const password of [
      "correct horse battery",
      "correct horse battery staple",
      "Xk9#mQ2$vLp7@nR4",
      "7tGw!pZ3qLx9@bNe",
      "violet tractor 42 moon",
      "my cat eats 3 lemons",
      "837261940573",
      "kettle-orbit-saffron",
    ])
      expect(isCommonPassword(password), password).toBe(false);
  });
});
